// Package logcheck reports what is damaged in a JSONL store's root
// without writing anything: the problems `dsh-actors check` prints.
//
// Telling a damaged log from a healthy one takes the session package's
// log reader (its line scanner, its Zstandard frames, the rule that a
// log lives at the path its header names), so the session package
// registers its walk of a root here when it is initialised, as the stores
// register their durable inbox in internal/durable. The check adds
// nothing to session's exported surface, and any program that links the
// session package can call Check.
package logcheck

import (
	"context"
	"errors"
	"sync"
)

// Kinds of Damage.
const (
	// Log: a log a read refuses (damage in its committed region, in a
	// complete Zstandard frame, a log stored at a path its header does not
	// identify, an id stored twice), or one whose repairing load would cut
	// bytes (a torn tail, damage in an unfinished last turn).
	Log = "damaged-log"
	// Header: a log whose first line (first frame) is not a header the
	// listing accepts, so the listing skips or refuses the session.
	Header = "unreadable-header"
	// Temp: a leftover *.tmp file of an interrupted create.
	Temp = "temp-file"
	// EmptyFolder: a session folder holding nothing.
	EmptyFolder = "empty-folder"
	// Layout: a flat-layout log, or a log of the other encoding.
	Layout = "bad-layout"
)

// Damage is one problem Check found.
type Damage struct {
	Kind string // one of the kinds above
	Path string // the file or folder
	// Line is the event line (from 1, after the header) the damage starts
	// at, 0 when no line is involved.
	Line int
	// FrameAt is the byte offset of the damaged Zstandard frame, -1 when
	// none is involved.
	FrameAt int64
	Msg     string // what is wrong, naming Path
}

// Walk reads every project and session folder of the store rooted at
// root, writing nothing, and returns every problem found in folder order.
type Walk func(ctx context.Context, root string) ([]Damage, error)

var (
	mu   sync.Mutex
	walk Walk
)

// ErrNoReader is Check's error when no log reader registered its walk:
// the program does not link the session package.
var ErrNoReader = errors.New("logcheck: no log reader is registered (the session package is not linked)")

// Register installs the walk Check runs. The session package calls it
// once, from its init; a second call panics. It does not block.
func Register(w Walk) {
	mu.Lock()
	defer mu.Unlock()
	if walk != nil {
		panic("logcheck: Register called twice")
	}
	walk = w
}

// Check walks the store rooted at root without writing anything and
// returns every problem it finds, in folder order: each damaged log with
// its line or frame, each header that cannot be read, leftover temporary
// files, empty session folders, flat-layout logs and logs of the other
// encoding. A root that does not exist has no problems. It fails only
// when a folder or file cannot be read at all, when ctx is done (it checks
// between project folders), or with ErrNoReader. It blocks while it reads.
func Check(ctx context.Context, root string) ([]Damage, error) {
	mu.Lock()
	w := walk
	mu.Unlock()
	if w == nil {
		return nil, ErrNoReader
	}
	return w(ctx, root)
}
