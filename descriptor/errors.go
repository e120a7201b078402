package descriptor

import "errors"

// The error kinds of this package; match them with errors.Is.
var (
	// ErrCorrupt matches a persisted payload of the current version that
	// breaks a rule (the listing reports it as "corrupt").
	ErrCorrupt = errors.New("subagent descriptor is corrupt")
	// ErrUnsupported matches a persisted payload whose numeric version is
	// not Version (the listing reports it as "unsupported").
	ErrUnsupported = errors.New("subagent descriptor version is unsupported")
	// ErrInvalid matches a Snapshot input that cannot become a payload.
	ErrInvalid = errors.New("subagent descriptor input is invalid")
)

// Error is the one error type of this package. Kind is ErrCorrupt,
// ErrUnsupported or ErrInvalid; Message is the full lower-case text, for a
// persisted payload prefixed "persisted subagent descriptor ".
type Error struct {
	Kind    error
	Message string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the kind, so errors.Is(err, ErrCorrupt) works.
func (e *Error) Unwrap() error { return e.Kind }

const persistedPrefix = "persisted subagent descriptor "

func corrupt(detail string) error {
	return &Error{Kind: ErrCorrupt, Message: persistedPrefix + detail}
}

func unsupported(version string) error {
	return &Error{Kind: ErrUnsupported, Message: persistedPrefix + "version " + version + " is not supported"}
}

func invalid(message string) error {
	return &Error{Kind: ErrInvalid, Message: message}
}
