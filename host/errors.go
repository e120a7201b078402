package host

import (
	"fmt"

	"github.com/dsh-actors/dsh-actors/session"
)

// The wire error codes (web-host §1.2). Business errors travel with HTTP 200
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
	// The host uses ordered structs (Details, IssueDetails) so that keys
	// keep the original's order.
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

// Issue is one schema validation problem in a bad-request's details,
// shaped and ordered as zod 4 (the original's validator) reports it:
//
//	invalid_type  {expected, format?, code, received?, path, message}
//	              ({code, expected:"nonoptional", path, message} for a missing envelope payload)
//	invalid_value {code, values, path, message}
//	too_small     {origin, code, minimum, inclusive, path, message}
//	too_small / too_big outside the safe integer range
//	              {code, minimum|maximum, note, origin, inclusive, path, message}
//	invalid_union {code, errors, path, message}
type Issue struct {
	Code      string
	Path      []any
	Message   string
	Expected  string // invalid_type
	Format    string // invalid_type of a non-integer: "safeint"
	Received  string // invalid_type of a non-finite number: "Infinity"
	Values    []any  // invalid_value
	Origin    string // too_small, too_big: "string", "number" or "int"
	Limit     int64  // too_small: minimum; too_big: maximum
	Inclusive bool   // too_small, too_big
	Note      string // too_small, too_big outside the safe integer range
	// Errors is an invalid_union's issues per option, in order, each with
	// a path relative to the union.
	Errors [][]Issue
}

// MarshalJSON writes the issue's keys in zod 4's order for its kind.
func (i Issue) MarshalJSON() ([]byte, error) {
	var o orderedObject
	limitKey := "minimum"
	if i.Code == "too_big" {
		limitKey = "maximum"
	}
	switch {
	case i.Code == "invalid_type" && i.Expected == "nonoptional":
		o.add("code", i.Code).add("expected", i.Expected)
	case i.Code == "invalid_type":
		o.add("expected", i.Expected)
		if i.Format != "" {
			o.add("format", i.Format)
		}
		o.add("code", i.Code)
		if i.Received != "" {
			o.add("received", i.Received)
		}
	case i.Code == "invalid_value":
		o.add("code", i.Code).add("values", i.Values)
	case i.Code == "invalid_union":
		o.add("code", i.Code).add("errors", i.Errors)
	case (i.Code == "too_small" || i.Code == "too_big") && i.Note != "":
		o.add("code", i.Code).add(limitKey, i.Limit).add("note", i.Note).add("origin", i.Origin).add("inclusive", i.Inclusive)
	case i.Code == "too_small" || i.Code == "too_big":
		o.add("origin", i.Origin).add("code", i.Code).add(limitKey, i.Limit).add("inclusive", i.Inclusive)
	default:
		o.add("code", i.Code)
	}
	path := i.Path
	if path == nil {
		path = []any{}
	}
	o.add("path", path).add("message", i.Message)
	return o.bytes()
}

// orderedObject builds a JSON object whose keys keep their insertion order.
type orderedObject struct {
	buf []byte
	err error
}

func (o *orderedObject) add(key string, value any) *orderedObject {
	if o.err != nil {
		return o
	}
	k, _ := session.EncodeData(key)
	v, err := session.EncodeData(value)
	if err != nil {
		o.err = err
		return o
	}
	if len(o.buf) == 0 {
		o.buf = append(o.buf, '{')
	} else {
		o.buf = append(o.buf, ',')
	}
	o.buf = append(append(append(o.buf, k...), ':'), v...)
	return o
}

func (o *orderedObject) bytes() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	if len(o.buf) == 0 {
		return []byte("{}"), nil
	}
	return append(o.buf, '}'), nil
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
