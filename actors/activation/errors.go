package activation

import "errors"

// Error is the error type of the actors layer (packages activation, parent
// and actors). Code is a stable upper-case code; errors.Is matches two
// *Error values by Code, so the exported sentinels of these packages work
// with errors.Is however the error was wrapped.
type Error struct {
	Code    string
	Message string // lower-case, prefixed "actors: ", names the ids involved
	Err     error  // the cause, or nil
}

// Error returns the message, followed by the cause when there is one.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

// CodeInboxClosed is the code of ErrInboxClosed.
const CodeInboxClosed = "INBOX_CLOSED"

// ErrInboxClosed matches a follow-up refused because the agent is being
// disposed or has been disposed.
var ErrInboxClosed = &Error{Code: CodeInboxClosed, Message: "actors: inbox is closed"}

// inboxClosed names the agent whose inbox refused a message.
func inboxClosed(id string, cause error) error {
	return &Error{Code: CodeInboxClosed, Message: "actors: agent \"" + id + "\" inbox is closed", Err: cause}
}

// CodeInvalidMessage is the code of ErrInvalidMessage.
const CodeInvalidMessage = "INVALID_MESSAGE"

// ErrInvalidMessage matches a message refused at admission because the
// original harness could not read it back (a message without a source kind).
var ErrInvalidMessage = &Error{Code: CodeInvalidMessage, Message: "actors: invalid message"}

func invalidMessage(id, why string) error {
	return &Error{Code: CodeInvalidMessage, Message: "actors: agent \"" + id + "\" refused a message: " + why}
}
