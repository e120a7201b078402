package session

import (
	"context"
	"encoding/json"
)

// formatVersion is the only on-disk log format version this package reads
// and writes (the original harness's SESSION_FORMAT_VERSION), a Header's
// zero Version.
const formatVersion = 0

// Header is the immutable first line of a session log. Optional fields are
// omitted on disk when zero (SeedLength when nil); DelegationDepth is always
// written. MarshalJSON writes the keys in the original's order:
// type, version, id, createdAt, cwd, parentSession, seedLength, origin,
// delegationDepth, agentPreset.
type Header struct {
	Version         int
	ID              string
	CreatedAt       int64 // Unix epoch milliseconds, >= 0
	Cwd             string
	ParentSession   string
	SeedLength      *int // nil means absent; present only when a seed was inherited
	Origin          string
	DelegationDepth int
	AgentPreset     string
}

// OwnStart is the seq at which the session's own events begin: past the
// seed it inherited (SeedLength), 0 when it inherited none (a negative
// SeedLength, which no store writes, counts as none). It does not block.
func (h Header) OwnStart() int {
	if h.SeedLength == nil {
		return 0
	}
	return max(*h.SeedLength, 0)
}

// Event is one line of a session log after the header:
// {type, seq, time, data[, sourceEventSeqs][, surfaceOp][, ignorable]}.
// Data and SurfaceOp are kept as raw JSON so that a round trip preserves the
// bytes (and therefore the key order) the writer chose.
type Event struct {
	Type            string
	Seq             int64
	Time            int64 // Unix epoch milliseconds
	Data            json.RawMessage
	SourceEventSeqs []int64         // nil means absent; an empty non-nil slice is written as []
	SurfaceOp       json.RawMessage // nil means absent; `"append"` or {"op":"replace",...}
	Ignorable       bool
}

// Log is a header with its contiguous events (events[i].Seq == i).
type Log struct {
	Header Header
	Events []Event
}

// Store is the persistence seam over one root folder of session logs.
// Every method honours ctx cancellation before it starts I/O.
type Store interface {
	// List returns the headers of every stored session, in no particular
	// order. A folder whose first line is not a valid header is skipped.
	List(ctx context.Context) ([]Header, error)
	// Inspect returns the valid stored prefix of a log and never writes.
	// A torn tail is tolerated; damage in the committed region is a
	// error matching ErrCorrupt, naming file and line. A missing id is ErrNotFound.
	Inspect(ctx context.Context, id string) (*Log, error)
	// Load is the repairing read used by resume: it truncates a torn tail and
	// durably appends closers for an open final turn before returning. It
	// re-establishes a failed log.
	Load(ctx context.Context, id string) (*Log, error)
	// Create materializes a new log holding the header and the seed events,
	// fsyncing the file and its directory before it returns.
	// An existing log with that id is an error.
	Create(ctx context.Context, h Header, seed []Event) error
	// Append adds events to the end of a log. It returns only once the batch
	// the events joined is durable (group commit: one writer per log, one
	// fdatasync per batch). After a failed write or sync the log is failed
	// and every later Append returns an error wrapping ErrLogFailed, until
	// a Load re-establishes it (e.g. once a full disk has room again).
	Append(ctx context.Context, id string, events []Event) error
	// Flush waits until everything appended to id so far is durable and
	// reports true; false means there was nothing to confirm durability with.
	Flush(ctx context.Context, id string) (bool, error)
	// Close waits for pending writes and releases every writer.
	Close() error
}
