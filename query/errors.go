package query

import (
	"context"
	"errors"
)

// The closed set of session query codes (15).
const (
	CodeAborted           = "SESSION_QUERY_ABORTED"
	CodeEventNotFound     = "SESSION_QUERY_EVENT_NOT_FOUND"
	CodeIndexFailed       = "SESSION_QUERY_INDEX_FAILED"
	CodeInvalidConfig     = "SESSION_QUERY_INVALID_CONFIG"
	CodeInvalidCursor     = "SESSION_QUERY_INVALID_CURSOR"
	CodeInvalidFilter     = "SESSION_QUERY_INVALID_FILTER"
	CodeInvalidLimit      = "SESSION_QUERY_INVALID_LIMIT"
	CodeInvalidQuery      = "SESSION_QUERY_INVALID_QUERY"
	CodeInvalidLineage    = "SESSION_QUERY_INVALID_LINEAGE"
	CodeInvalidSurface    = "SESSION_QUERY_INVALID_SURFACE"
	CodeInvalidWindow     = "SESSION_QUERY_INVALID_WINDOW"
	CodePersistenceFailed = "SESSION_QUERY_PERSISTENCE_FAILED"
	CodeSessionNotFound   = "SESSION_QUERY_SESSION_NOT_FOUND"
	CodeStaleCursor       = "SESSION_QUERY_STALE_CURSOR"
	CodeSourceConflict    = "SESSION_QUERY_SOURCE_CONFLICT"
)

// The two subagent-control codes the catalog reader raises. They belong to
// the subagent layer in the original; ListChildren lives here so that
// listing never depends on the actor runtime, and the subagent layer maps
// them onto its own error type.
const (
	CodeCancelled               = "CANCELLED"
	CodeSessionQueryUnavailable = "SUBAGENT_CONTROL_SESSION_QUERY_UNAVAILABLE"
)

// Error is the one error type of this package. Code is one of the codes
// above; Message is the exact lower-case text; Err is the cause, if any.
// errors.Is(err, target) is true when target is an *Error with the same
// Code, so the sentinels below (or &Error{Code: c} for any code) match.
type Error struct {
	Code    string
	Message string
	Err     error
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches any *Error carrying the same code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

// Sentinels for the codes this package raises; use them with errors.Is.
var (
	ErrSessionNotFound         = &Error{Code: CodeSessionNotFound, Message: "session not found"}
	ErrEventNotFound           = &Error{Code: CodeEventNotFound, Message: "event not found"}
	ErrPersistenceFailed       = &Error{Code: CodePersistenceFailed, Message: "session persistence failed"}
	ErrSourceConflict          = &Error{Code: CodeSourceConflict, Message: "session source headers conflict"}
	ErrInvalidLineage          = &Error{Code: CodeInvalidLineage, Message: "session lineage is invalid"}
	ErrInvalidSurface          = &Error{Code: CodeInvalidSurface, Message: "invalid session surface"}
	ErrInvalidWindow           = &Error{Code: CodeInvalidWindow, Message: "invalid read window"}
	ErrCancelled               = &Error{Code: CodeCancelled, Message: "subagent listing was cancelled"}
	ErrSessionQueryUnavailable = &Error{Code: CodeSessionQueryUnavailable, Message: "session query unavailable"}
)

func newError(code, message string, cause error) *Error {
	return &Error{Code: code, Message: message, Err: cause}
}

func sessionNotFound(id string) error {
	return newError(CodeSessionNotFound, `session "`+id+`" not found`, nil)
}

func sourceConflict(id string) error {
	return newError(CodeSourceConflict, `session source headers conflict for session "`+id+`"`, nil)
}

// cancelled reports ctx's reason exactly when ctx is done (the original
// rejects with the signal's reason, not a query error), else nil.
func cancelled(ctx context.Context) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}
