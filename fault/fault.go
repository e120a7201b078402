// Package fault is the one error taxonomy of dsh-actors: every error a
// layer returns on purpose is an *Error carrying a Code, and every Code is
// itself an error, so errors.Is(err, fault.Draining) matches however the
// error was wrapped and whichever layer returned it. The codes' string
// values are stable: other programs read them.
package fault

// Code is a stable upper-case error code. A Code is an error so that it
// can be the target of errors.Is.
type Code string

// Error returns the code itself.
func (c Code) Error() string { return string(c) }

// Error is the one error shape: a Code, the full lower-case Message (it
// names the ids involved and, where the layer says so, quotes its cause)
// and the wrapped Cause, if any.
type Error struct {
	Code    Code
	Message string
	Cause   error
}

// New returns an *Error with code, message and cause (nil for none).
func New(code Code, message string, cause error) *Error {
	return &Error{Code: code, Message: message, Cause: cause}
}

// Error returns the message (the code when the message is empty).
func (e *Error) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Is reports whether target is e's Code, or an *Error with that Code.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case Code:
		return t == e.Code
	case *Error:
		return t.Code == e.Code
	}
	return false
}

// CodeOf returns the Code of the first *Error in err's chain, or "".
func CodeOf(err error) Code {
	for err != nil {
		if e, ok := err.(*Error); ok {
			return e.Code
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				if c := CodeOf(inner); c != "" {
					return c
				}
			}
			return ""
		default:
			return ""
		}
	}
	return ""
}
