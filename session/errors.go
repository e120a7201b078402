package session

import (
	"errors"
	"fmt"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
)

// Sentinels for errors.Is. Every error this package returns matches at most
// one of them (plus the cause it wraps).
var (
	// ErrNotFound: no log (store) or no live session (registry) has the id.
	ErrNotFound = errors.New("session not found")
	// ErrExists: Create found the id already stored or live.
	ErrExists = errors.New("session already exists")
	// ErrLogFailed: a write or sync of this log failed earlier; the log
	// refuses every later append and flush until the process reopens it.
	ErrLogFailed = errors.New("session log failed")
	// ErrSeqMismatch: appended events do not continue the log's seq.
	ErrSeqMismatch = errors.New("append seq mismatch")
	// ErrCorrupt matches every *corruptError.
	ErrCorrupt = errors.New("corrupt session log")
	// errUnsupported matches every *unsupportedError.
	errUnsupported = errors.New("unsupported session log")
	// ErrInvalid: a header or event given to Create or Append is malformed
	// (an id or cwd that cannot name a path included: it is the layout's
	// own sentinel).
	ErrInvalid = logpath.ErrInvalid
	// errClosed: the store was closed.
	errClosed = errors.New("session store closed")
	// errNotLive: the *Live was released or belongs to another registry.
	errNotLive = errors.New("session is not live")
)

// corruptError reports damage in a stored log: a bad header, damage in the
// committed region, a log stored at a path its header does not identify,
// or one id stored twice. Line counts event lines after the header from 1,
// as the original's scanner does (0 when no line is involved); in a
// Zstandard log the lines run on across frames, and FrameAt is the byte
// offset in the file of the frame the damage is in (-1 when no frame is
// involved, as in every uncompressed log).
type corruptError struct {
	Path    string
	Line    int
	FrameAt int64
	Msg     string // the full message, naming Path
	// readable holds the events read before damage in the log's body
	// (nil when the damage is elsewhere: the header, the path, the id).
	readable []Event
}

// Error returns the message, which names the file.
func (e *corruptError) Error() string { return e.Msg }

// ReadablePrefix returns what a read refused for damage in a log's body
// could still read: the events before the damaged line, and that line
// (event lines counted from 1 after the header). ok is false for any
// other error, a damaged header included. The events are the store's own
// (do not modify them).
func ReadablePrefix(err error) (events []Event, line int, ok bool) {
	var ce *corruptError
	if !errors.As(err, &ce) || ce.readable == nil {
		return nil, 0, false
	}
	return ce.readable, ce.Line, true
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *corruptError) Is(target error) bool { return target == ErrCorrupt }

// corruptf builds a *corruptError; a message that does not already name
// the path gets the original's " (raw log: <path>)" suffix.
func corruptf(path string, line int, format string, args ...any) *corruptError {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg += " (raw log: " + path + ")"
	}
	return &corruptError{Path: path, Line: line, FrameAt: -1, Msg: msg}
}

// unsupportedError reports a log this build refuses to interpret: a foreign
// format version, a compressed (.jsonl.zstd) artifact, the legacy
// flat-file layout, or an event of a type this build does not know and
// that is not marked ignorable.
type unsupportedError struct {
	ID   string
	Path string
	Msg  string // the full message, naming Path
	// inBody is set when an event, not the header or the layout, is what
	// this build cannot interpret.
	inBody bool
}

// Error returns the message, which names the file.
func (e *unsupportedError) Error() string { return e.Msg }

// Is makes errors.Is(err, errUnsupported) true.
func (e *unsupportedError) Is(target error) bool { return target == errUnsupported }

// kindError is a message matched by one sentinel and wrapping a cause.
type kindError struct {
	kind  error
	msg   string
	cause error
}

func (e *kindError) Error() string {
	if e.cause != nil {
		return e.msg + ": " + e.cause.Error()
	}
	return e.msg
}

func (e *kindError) Is(target error) bool { return target == e.kind }
func (e *kindError) Unwrap() error        { return e.cause }

func notFound(id string) error {
	return &kindError{kind: ErrNotFound, msg: `session "` + id + `" not found`}
}

func invalidf(format string, args ...any) error {
	return &kindError{kind: ErrInvalid, msg: fmt.Sprintf(format, args...)}
}

func existsf(format string, args ...any) error {
	return &kindError{kind: ErrExists, msg: fmt.Sprintf(format, args...)}
}

func logFailed(id string, cause error) error {
	return &kindError{kind: ErrLogFailed, msg: `session "` + id + `" log failed`, cause: cause}
}

// corruptNamed builds a *corruptError whose message already names path.
func corruptNamed(path string, format string, args ...any) *corruptError {
	return &corruptError{Path: path, FrameAt: -1, Msg: fmt.Sprintf(format, args...)}
}

// asLogFailed returns err if it already matches ErrLogFailed, else wraps it.
func asLogFailed(id string, err error) error {
	if errors.Is(err, ErrLogFailed) {
		return err
	}
	return logFailed(id, err)
}
