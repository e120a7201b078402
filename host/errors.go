package host

import (
	"errors"
	"fmt"
	"slices"
	"syscall"

	"github.com/dsh-actors/dsh-actors/fault"
)

// The wire error codes (docs/wire-protocol.md). Business errors travel with HTTP 200
// in a server-response whose result is {ok:false, error:{code, message, details}}.
// A Backend classifies a failure under one of them with Wrap; match it with
// errors.Is(err, host.CodeX).
const (
	codeBadRequest                fault.Code = "bad-request"
	codeCancelled                 fault.Code = "cancelled"
	codeInternal                  fault.Code = "internal"
	codeAgentBusy                 fault.Code = "agent-busy"
	codeSessionNotFound           fault.Code = "session-not-found"
	codeSubagentParentUnavailable fault.Code = "subagent-parent-unavailable"
	codeSubagentNotFound          fault.Code = "subagent-not-found"
	codeSubagentCatalogDiagnostic fault.Code = "subagent-catalog-diagnostic"
	codeSubagentNotResumable      fault.Code = "subagent-not-resumable"
	codeSubagentUnauthorized      fault.Code = "subagent-unauthorized"
	codeSubagentNotDelivered      fault.Code = "subagent-not-delivered"
	// codeStorageFull: the message could not be logged because the disk
	// holding the session's log is full; nothing was acknowledged.
	codeStorageFull fault.Code = "storage-full"
)

// rpcError is a wire error: the exact wire code, message and details.
type rpcError struct {
	Code    fault.Code
	Message string
	// Details is the JSON object sent as error.details; nil is sent as {}.
	// The host uses structs (Details, issueDetails) so that keys keep a
	// fixed order.
	Details any
}

// Error returns "host: <message>".
func (e *rpcError) Error() string { return "host: " + e.Message }

// wrap classifies cause under a wire code: a *fault.Error with that code,
// the text "host: <code>: <cause>" and cause wrapped. A Backend returns it
// so that errors.Is(err, CodeX) selects the host's mapping; the wire
// message and details are always the host's own, never the cause's text.
func wrap(code fault.Code, cause error) error {
	return fault.New(code, fmt.Sprintf("host: %s: %v", code, cause), cause)
}

// newError builds a wire error; details nil becomes {} on the wire.
func newError(code fault.Code, message string, details any) *rpcError {
	if details == nil {
		details = struct{}{}
	}
	return &rpcError{Code: code, Message: message, Details: details}
}

// details are the ids and reason a business error names, in the original's
// key order: sessionId, parentSessionId, childSessionId, reason. Empty
// fields are left out (ids are never empty once the payload is valid).
type details struct {
	SessionID       string `json:"sessionId,omitempty"`
	ParentSessionID string `json:"parentSessionId,omitempty"`
	ChildSessionID  string `json:"childSessionId,omitempty"`
	Reason          string `json:"reason,omitempty"`
}

// issueDetails are a bad-request's details: {issues}.
type issueDetails struct {
	Issues []payloadIssue `json:"issues"`
}

// payloadIssue is one validation problem in a bad-request's details: its code
// (the issue* constants), the keys and array indexes from the payload down
// to the value ([] for the whole payload), and a short English message.
type payloadIssue struct {
	Code    string `json:"code"`
	Path    []any  `json:"path"`
	Message string `json:"message"`
}

func badRequest(message string, issues []payloadIssue) *rpcError {
	if issues == nil {
		issues = []payloadIssue{}
	}
	return newError(codeBadRequest, message, issueDetails{Issues: issues})
}

// quote puts id between double quotes with nothing escaped, as the original's
// JS templates (`session "${id}" …`) write it; Go's %q would escape.
func quote(id string) string { return `"` + id + `"` }

// isDiskFull reports whether err was caused by a full disk (ENOSPC).
func isDiskFull(err error) bool { return errors.Is(err, syscall.ENOSPC) }

// storageFull is the storage-full error of a session (details
// {sessionId}) or, with child, of a continuable child (details
// {childSessionId}) whose log the full disk refused.
func storageFull(id string, child bool) *rpcError {
	message := "session " + quote(id) + " cannot be written: the disk is full; retry once it has room"
	if child {
		return newError(codeStorageFull, message, details{ChildSessionID: id})
	}
	return newError(codeStorageFull, message, details{SessionID: id})
}

// unreadableLog is the original's answer when a session's stored log, or
// the store, cannot be read (fault.QueryPersistenceFailed: a log this
// build refuses to interpret, a store it cannot open): internal, details
// {}, the reason riding the message, "<failed>: <the store's words>"
// (they name the file), failed naming the session. ok is false for any
// other error, whose cause stays in the server's log.
func unreadableLog(failed string, err error) (_ *rpcError, ok bool) {
	words, ok := persistenceWords(err)
	if !ok {
		return nil, false
	}
	return newError(codeInternal, failed+": "+words, nil), true
}

// persistenceWords is the store's own words about a persistence failure:
// the cause of the fault.QueryPersistenceFailed error in err's chain (its
// message when it has none). ok is false when err is no such failure.
func persistenceWords(err error) (string, bool) {
	f := persistenceFailure(err)
	switch {
	case f == nil:
		return "", false
	case f.Cause != nil:
		return f.Cause.Error(), true
	}
	return f.Message, true
}

// persistenceFailure is the fault.QueryPersistenceFailed error in err's
// chain, nil when there is none.
func persistenceFailure(err error) *fault.Error {
	return faultIn(err, fault.QueryPersistenceFailed)
}

// faultIn is the first *fault.Error in err's chain whose Code is one of
// codes, nil when there is none.
func faultIn(err error, codes ...fault.Code) *fault.Error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if f, ok := e.(*fault.Error); ok && slices.Contains(codes, f.Code) {
			return f
		}
	}
	return nil
}
