package manager

import (
	"fmt"
	"strings"
)

// Error is the subagent layer's error: Code is one of the codes below,
// Message a fixed text (lower-case, naming the ids
// involved) and Cause the wrapped error, if any. errors.Is matches any
// *Error with the same Code, so callers compare against the sentinels below.
// The subagent package re-exports this type as subagent.Error.
type Error struct {
	Code    string
	Message string
	Cause   error
}

// Error returns the message; the cause's chain is already part of it where
// the message quotes it.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// The error codes, each with a sentinel to match with
// errors.Is.
const (
	CodeDuplicateProvider        = "DUPLICATE_PROVIDER"
	CodeNoProvider               = "NO_PROVIDER"
	CodeUnsupportedCapability    = "UNSUPPORTED_CAPABILITY"
	CodeContinuationUnavailable  = "CONTINUATION_UNAVAILABLE"
	CodePersistenceUnavailable   = "PERSISTENCE_UNAVAILABLE"
	CodeDraining                 = "DRAINING"
	CodeUnauthorized             = "UNAUTHORIZED"
	CodeActivationClosing        = "ACTIVATION_CLOSING"
	CodeNotResumable             = "NOT_RESUMABLE"
	CodeActivationTeardownFailed = "ACTIVATION_TEARDOWN_FAILED"
	CodeDurabilityFailed         = "DURABILITY_FAILED"
	CodeSessionQueryUnavailable  = "SUBAGENT_CONTROL_SESSION_QUERY_UNAVAILABLE"
	CodeCancelled                = "CANCELLED"
)

// Sentinels, one per code, for errors.Is.
var (
	ErrDuplicateProvider        = &Error{Code: CodeDuplicateProvider}
	ErrNoProvider               = &Error{Code: CodeNoProvider}
	ErrUnsupportedCapability    = &Error{Code: CodeUnsupportedCapability}
	ErrContinuationUnavailable  = &Error{Code: CodeContinuationUnavailable}
	ErrPersistenceUnavailable   = &Error{Code: CodePersistenceUnavailable}
	ErrDraining                 = &Error{Code: CodeDraining}
	ErrUnauthorized             = &Error{Code: CodeUnauthorized}
	ErrActivationClosing        = &Error{Code: CodeActivationClosing}
	ErrNotResumable             = &Error{Code: CodeNotResumable}
	ErrActivationTeardownFailed = &Error{Code: CodeActivationTeardownFailed}
	ErrDurabilityFailed         = &Error{Code: CodeDurabilityFailed}
	ErrSessionQueryUnavailable  = &Error{Code: CodeSessionQueryUnavailable}
	ErrCancelled                = &Error{Code: CodeCancelled}
)

func newError(code string, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Cause: cause}
}

// DuplicateProvider is DUPLICATE_PROVIDER for a name already registered.
func DuplicateProvider(name string) *Error {
	return newError(CodeDuplicateProvider, nil, "a subagent provider named \"%s\" is already registered", name)
}

// NoProvider is NO_PROVIDER for a name nobody registered.
func NoProvider(name string) *Error {
	return newError(CodeNoProvider, nil, "no subagent provider registered for \"%s\"", name)
}

// UnsupportedCapability is UNSUPPORTED_CAPABILITY for a one-shot request that
// needs a capability (outputSchema, depthLimit, toolFilter, persona) the
// provider does not declare.
func UnsupportedCapability(provider, capability string) *Error {
	return newError(CodeUnsupportedCapability, nil,
		"subagent provider \"%s\" does not support the \"%s\" capability", provider, capability)
}

// UnsupportedContinuable is UNSUPPORTED_CAPABILITY for a continuable start
// through a provider without the PrepareContinuable capability.
func UnsupportedContinuable(provider string) *Error {
	return newError(CodeUnsupportedCapability, nil,
		"subagent provider \"%s\" does not support continuable children (no prepareContinuable capability)", provider)
}

// ContinuationUnavailable is CONTINUATION_UNAVAILABLE: no manager is bound.
func ContinuationUnavailable() *Error {
	return newError(CodeContinuationUnavailable, nil, "continuable subagents require the agents service")
}

// PersistenceUnavailable is PERSISTENCE_UNAVAILABLE: the runtime has no
// session store.
func PersistenceUnavailable() *Error {
	return newError(CodePersistenceUnavailable, nil,
		"continuable subagents require session persistence (load a dsh-session-persistence backend)")
}

// Draining is the manager-wide DRAINING form.
func Draining() *Error {
	return newError(CodeDraining, nil, "continuable subagents are draining; the operation was not admitted")
}

// ScopedDraining is the DRAINING form for a caller inside a scoped drain
// rooted at rootID.
func ScopedDraining(rootID string) *Error {
	return newError(CodeDraining, nil,
		"continuable subagents below parent \"%s\" are draining; the operation was not admitted", rootID)
}

// NotExactParent is UNAUTHORIZED when the caller is not the registry's exact
// live entry for its id.
func NotExactParent(childID string) *Error {
	return newError(CodeUnauthorized, nil, "subagent \"%s\" delivery requires the exact live parent agent", childID)
}

// ForeignParent is UNAUTHORIZED when the child's durable header names
// another parent session.
func ForeignParent(childID string) *Error {
	return newError(CodeUnauthorized, nil, "subagent \"%s\" belongs to another parent session", childID)
}

// ParentClosing is ACTIVATION_CLOSING when the parent's Activation is being
// disposed while a child is being established under it.
func ParentClosing(parentID string) *Error {
	return newError(CodeActivationClosing, nil,
		"subagent parent \"%s\" is being disposed; the child was not established", parentID)
}

// ActivationClosing is ACTIVATION_CLOSING when the target Activation's
// disposal opened before a message could be admitted.
func ActivationClosing(childID string) *Error {
	return newError(CodeActivationClosing, nil,
		"subagent \"%s\" activation is being disposed; the message was not accepted", childID)
}

// Unavailable is NOT_RESUMABLE when the child's log could not be loaded.
func Unavailable(childID string, cause error) *Error {
	return newError(CodeNotResumable, cause, "subagent \"%s\" is unavailable", childID)
}

// NoContinuationState is NOT_RESUMABLE when the child's own log suffix has no
// supported descriptor.
func NoContinuationState(childID string) *Error {
	return newError(CodeNotResumable, nil,
		"subagent \"%s\" has no supported continuation state and cannot be resumed; do not retry send_message with this id",
		childID)
}

// ChildTeardownFailed is ACTIVATION_TEARDOWN_FAILED when owned children
// failed their disposal; the first failure is the cause.
func ChildTeardownFailed(childID string, failures []error) *Error {
	return newError(CodeActivationTeardownFailed, first(failures),
		"subagent \"%s\" child teardown failed: %s", childID, chains(failures))
}

// TeardownStepFailed is ACTIVATION_TEARDOWN_FAILED when waiting for
// quiescence or capturing the epoch failed.
func TeardownStepFailed(childID string, cause error) *Error {
	return newError(CodeActivationTeardownFailed, cause,
		"subagent \"%s\" activation teardown failed: %s", childID, chain(cause))
}

// HandleDisposalFailed is ACTIVATION_TEARDOWN_FAILED when disposing the
// child's agent handle failed.
func HandleDisposalFailed(childID string, cause error) *Error {
	return newError(CodeActivationTeardownFailed, cause,
		"subagent \"%s\" activation handle disposal failed: %s", childID, chain(cause))
}

// TeardownFailed is the aggregate ACTIVATION_TEARDOWN_FAILED of a drain;
// scope is "" for the manager-wide drain and "scoped" for a scoped one.
func TeardownFailed(scope string, failures []error) *Error {
	what := "activation(s)"
	if scope != "" {
		what = scope + " " + what
	}
	return newError(CodeActivationTeardownFailed, first(failures),
		"continuable subagent teardown failed for %d %s: %s", len(failures), what, chains(failures))
}

// DurabilityUnconfirmed is DURABILITY_FAILED when the final flush reported
// false: nothing confirmed the child's state durable.
func DurabilityUnconfirmed(childID string) *Error {
	return newError(CodeDurabilityFailed, nil,
		"subagent \"%s\" required durability checkpoint has no registered listener; the latest child state was not confirmed persisted and may be unavailable or stale on resume",
		childID)
}

// DurabilityCheckpointFailed is DURABILITY_FAILED when the final flush
// returned an error.
func DurabilityCheckpointFailed(childID string, cause error) *Error {
	return newError(CodeDurabilityFailed, cause,
		"subagent \"%s\" durability checkpoint failed; the latest child state was not confirmed persisted and may be unavailable or stale on resume: %s",
		childID, chain(cause))
}

// SessionQueryUnavailable is SUBAGENT_CONTROL_SESSION_QUERY_UNAVAILABLE:
// listing was asked of a service built without a session query.
func SessionQueryUnavailable() *Error {
	return newError(CodeSessionQueryUnavailable, nil,
		"listing subagents requires session query (load a dsh-session-query backend)")
}

// Cancelled is CANCELLED: a listing observed its context cancelled.
func Cancelled(cause error) *Error {
	return newError(CodeCancelled, cause, "subagent listing was cancelled")
}

// chain renders an error with its causes, as the original's errorChain does; a
// Go error's text already carries its wrapped causes.
func chain(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func chains(errs []error) string {
	parts := make([]string, len(errs))
	for i, err := range errs {
		parts[i] = chain(err)
	}
	return strings.Join(parts, "; ")
}

func first(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}
