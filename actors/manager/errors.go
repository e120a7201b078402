package manager

import (
	"fmt"
	"strings"

	"github.com/dsh-actors/dsh-actors/fault"
)

// newError is the subagent layer's *fault.Error: the message is a fixed
// text (lower-case, naming the ids involved).
func newError(code fault.Code, cause error, format string, args ...any) *fault.Error {
	return fault.New(code, fmt.Sprintf(format, args...), cause)
}

// NoProvider is NO_PROVIDER for a name nobody registered.
func NoProvider(name string) *fault.Error {
	return newError(fault.NoProvider, nil, "no subagent provider registered for \"%s\"", name)
}

// persistenceUnavailable is PERSISTENCE_UNAVAILABLE: the runtime has no
// session store.
func persistenceUnavailable() *fault.Error {
	return newError(fault.PersistenceUnavailable, nil,
		"continuable subagents require session persistence (load a dsh-session-persistence backend)")
}

// draining is the manager-wide DRAINING form.
func draining() *fault.Error {
	return newError(fault.Draining, nil, "continuable subagents are draining; the operation was not admitted")
}

// scopedDraining is the DRAINING form for a caller inside a scoped drain
// rooted at rootID.
func scopedDraining(rootID string) *fault.Error {
	return newError(fault.Draining, nil,
		"continuable subagents below parent \"%s\" are draining; the operation was not admitted", rootID)
}

// notExactParent is UNAUTHORIZED when the caller is not the registry's exact
// live entry for its id.
func notExactParent(childID string) *fault.Error {
	return newError(fault.Unauthorized, nil, "subagent \"%s\" delivery requires the exact live parent agent", childID)
}

// foreignParent is UNAUTHORIZED when the child's durable header names
// another parent session.
func foreignParent(childID string) *fault.Error {
	return newError(fault.Unauthorized, nil, "subagent \"%s\" belongs to another parent session", childID)
}

// parentClosing is ACTIVATION_CLOSING when the parent's Activation is being
// disposed while a child is being established under it.
func parentClosing(parentID string) *fault.Error {
	return newError(fault.ActivationClosing, nil,
		"subagent parent \"%s\" is being disposed; the child was not established", parentID)
}

// activationClosing is ACTIVATION_CLOSING when the target Activation's
// disposal opened before a message could be admitted.
func activationClosing(childID string) *fault.Error {
	return newError(fault.ActivationClosing, nil,
		"subagent \"%s\" activation is being disposed; the message was not accepted", childID)
}

// unavailable is NOT_RESUMABLE when the child's log could not be loaded.
func unavailable(childID string, cause error) *fault.Error {
	return newError(fault.NotResumable, cause, "subagent \"%s\" is unavailable", childID)
}

// noContinuationState is NOT_RESUMABLE when the child's own log suffix has no
// supported descriptor.
func noContinuationState(childID string) *fault.Error {
	return newError(fault.NotResumable, nil,
		"subagent \"%s\" has no supported continuation state and cannot be resumed; do not retry send_message with this id",
		childID)
}

// childTeardownFailed is ACTIVATION_TEARDOWN_FAILED when owned children
// failed their disposal; the first failure is the cause.
func childTeardownFailed(childID string, failures []error) *fault.Error {
	return newError(fault.ActivationTeardownFailed, first(failures),
		"subagent \"%s\" child teardown failed: %s", childID, chains(failures))
}

// teardownStepFailed is ACTIVATION_TEARDOWN_FAILED when waiting for
// quiescence or capturing the epoch failed.
func teardownStepFailed(childID string, cause error) *fault.Error {
	return newError(fault.ActivationTeardownFailed, cause,
		"subagent \"%s\" activation teardown failed: %s", childID, chain(cause))
}

// handleDisposalFailed is ACTIVATION_TEARDOWN_FAILED when disposing the
// child's agent handle failed.
func handleDisposalFailed(childID string, cause error) *fault.Error {
	return newError(fault.ActivationTeardownFailed, cause,
		"subagent \"%s\" activation handle disposal failed: %s", childID, chain(cause))
}

// teardownFailed is the aggregate ACTIVATION_TEARDOWN_FAILED of a drain;
// scope is "" for the manager-wide drain and "scoped" for a scoped one.
func teardownFailed(scope string, failures []error) *fault.Error {
	what := "activation(s)"
	if scope != "" {
		what = scope + " " + what
	}
	return newError(fault.ActivationTeardownFailed, first(failures),
		"continuable subagent teardown failed for %d %s: %s", len(failures), what, chains(failures))
}

// durabilityUnconfirmed is DURABILITY_FAILED when the final flush reported
// false: nothing confirmed the child's state durable.
func durabilityUnconfirmed(childID string) *fault.Error {
	return newError(fault.DurabilityFailed, nil,
		"subagent \"%s\" required durability checkpoint has no registered listener; the latest child state was not confirmed persisted and may be unavailable or stale on resume",
		childID)
}

// logFailed is DURABILITY_FAILED for a follow-up refused at admission
// because the resident child's session log failed: a message accepted now
// could never be logged.
func logFailed(childID string, cause error) *fault.Error {
	return newError(fault.DurabilityFailed, cause,
		"subagent \"%s\" cannot accept messages: its session log failed (%s); the message was not accepted, send it again once the child has settled",
		childID, chain(cause))
}

// durabilityCheckpointFailed is DURABILITY_FAILED when the final flush
// returned an error.
func durabilityCheckpointFailed(childID string, cause error) *fault.Error {
	return newError(fault.DurabilityFailed, cause,
		"subagent \"%s\" durability checkpoint failed; the latest child state was not confirmed persisted and may be unavailable or stale on resume: %s",
		childID, chain(cause))
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
