package host

import "fmt"

// The wire error codes (docs/wire-protocol.md). Business errors travel with HTTP 200
// in a server-response whose result is {ok:false, error:{code, message, details}}.
const (
	CodeBadRequest                = "bad-request"
	CodeCancelled                 = "cancelled"
	CodeInternal                  = "internal"
	CodeAgentBusy                 = "agent-busy"
	CodeSessionNotFound           = "session-not-found"
	CodeSubagentParentUnavailable = "subagent-parent-unavailable"
	CodeSubagentNotFound          = "subagent-not-found"
	CodeSubagentCatalogDiagnostic = "subagent-catalog-diagnostic"
	CodeSubagentNotResumable      = "subagent-not-resumable"
	CodeSubagentUnauthorized      = "subagent-unauthorized"
	CodeSubagentNotDelivered      = "subagent-not-delivered"
)

// Error is the host layer's one error type: a typed RPC error with the exact
// wire code, message and details. A Backend also uses it (through the
// sentinels below and Wrap) to classify its failures for the host.
type Error struct {
	Code    string
	Message string
	// Details is the JSON object sent as error.details; nil is sent as {}.
	// The host uses structs (Details, IssueDetails) so that keys keep a
	// fixed order.
	Details any
	Err     error
}

// Sentinels for errors.Is, matched by Code alone.
var (
	ErrBadRequest                = &Error{Code: CodeBadRequest}
	ErrCancelled                 = &Error{Code: CodeCancelled}
	ErrInternal                  = &Error{Code: CodeInternal}
	ErrAgentBusy                 = &Error{Code: CodeAgentBusy}
	ErrSessionNotFound           = &Error{Code: CodeSessionNotFound}
	ErrSubagentParentUnavailable = &Error{Code: CodeSubagentParentUnavailable}
	ErrSubagentNotFound          = &Error{Code: CodeSubagentNotFound}
	ErrSubagentCatalogDiagnostic = &Error{Code: CodeSubagentCatalogDiagnostic}
	ErrSubagentNotResumable      = &Error{Code: CodeSubagentNotResumable}
	ErrSubagentUnauthorized      = &Error{Code: CodeSubagentUnauthorized}
	ErrSubagentNotDelivered      = &Error{Code: CodeSubagentNotDelivered}
)

// Error returns "host: <message>" followed by the cause, if any.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Code
	}
	if e.Err != nil {
		return fmt.Sprintf("host: %s: %v", msg, e.Err)
	}
	return "host: " + msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Wrap classifies cause under a wire code. A Backend returns it so that
// errors.Is(err, ErrX) selects the host's mapping; the wire message and
// details are always the host's own, never the cause's text.
func Wrap(code string, cause error) error {
	return &Error{Code: code, Message: code, Err: cause}
}

// newError builds a wire error; details nil becomes {} on the wire.
func newError(code, message string, details any) *Error {
	if details == nil {
		details = struct{}{}
	}
	return &Error{Code: code, Message: message, Details: details}
}

// Details are the ids and reason a business error names, in the original's
// key order: sessionId, parentSessionId, childSessionId, reason. Empty
// fields are left out (ids are never empty once the payload is valid).
type Details struct {
	SessionID       string `json:"sessionId,omitempty"`
	ParentSessionID string `json:"parentSessionId,omitempty"`
	ChildSessionID  string `json:"childSessionId,omitempty"`
	Reason          string `json:"reason,omitempty"`
}

// IssueDetails are a bad-request's details: {issues}.
type IssueDetails struct {
	Issues []Issue `json:"issues"`
}

// Issue is one validation problem in a bad-request's details: its code
// (the issue* constants), the keys and array indexes from the payload down
// to the value ([] for the whole payload), and a short English message.
type Issue struct {
	Code    string `json:"code"`
	Path    []any  `json:"path"`
	Message string `json:"message"`
}

func badRequest(message string, issues []Issue) *Error {
	if issues == nil {
		issues = []Issue{}
	}
	return newError(CodeBadRequest, message, IssueDetails{Issues: issues})
}

// quote puts id between double quotes with nothing escaped, as the original's
// JS templates (`session "${id}" …`) write it; Go's %q would escape.
func quote(id string) string { return `"` + id + `"` }
