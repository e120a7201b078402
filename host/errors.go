package host

import (
	"fmt"

	"github.com/dsh-actors/dsh-actors/fault"
)

// The wire error codes (docs/wire-protocol.md). Business errors travel with HTTP 200
// in a server-response whose result is {ok:false, error:{code, message, details}}.
// A Backend classifies a failure under one of them with Wrap; match it with
// errors.Is(err, host.CodeX).
const (
	CodeBadRequest                fault.Code = "bad-request"
	CodeCancelled                 fault.Code = "cancelled"
	CodeInternal                  fault.Code = "internal"
	CodeAgentBusy                 fault.Code = "agent-busy"
	CodeSessionNotFound           fault.Code = "session-not-found"
	CodeSubagentParentUnavailable fault.Code = "subagent-parent-unavailable"
	CodeSubagentNotFound          fault.Code = "subagent-not-found"
	CodeSubagentCatalogDiagnostic fault.Code = "subagent-catalog-diagnostic"
	CodeSubagentNotResumable      fault.Code = "subagent-not-resumable"
	CodeSubagentUnauthorized      fault.Code = "subagent-unauthorized"
	CodeSubagentNotDelivered      fault.Code = "subagent-not-delivered"
)

// rpcError is a wire error: the exact wire code, message and details.
type rpcError struct {
	Code    fault.Code
	Message string
	// Details is the JSON object sent as error.details; nil is sent as {}.
	// The host uses structs (Details, IssueDetails) so that keys keep a
	// fixed order.
	Details any
}

// Error returns "host: <message>".
func (e *rpcError) Error() string { return "host: " + e.Message }

// Wrap classifies cause under a wire code: a *fault.Error with that code,
// the text "host: <code>: <cause>" and cause wrapped. A Backend returns it
// so that errors.Is(err, CodeX) selects the host's mapping; the wire
// message and details are always the host's own, never the cause's text.
func Wrap(code fault.Code, cause error) error {
	return fault.New(code, fmt.Sprintf("host: %s: %v", code, cause), cause)
}

// newError builds a wire error; details nil becomes {} on the wire.
func newError(code fault.Code, message string, details any) *rpcError {
	if details == nil {
		details = struct{}{}
	}
	return &rpcError{Code: code, Message: message, Details: details}
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

func badRequest(message string, issues []Issue) *rpcError {
	if issues == nil {
		issues = []Issue{}
	}
	return newError(CodeBadRequest, message, IssueDetails{Issues: issues})
}

// quote puts id between double quotes with nothing escaped, as the original's
// JS templates (`session "${id}" …`) write it; Go's %q would escape.
func quote(id string) string { return `"` + id + `"` }
