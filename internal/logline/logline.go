// Package logline hands the session package's log-line codec to the
// session stores written outside that package (the Postgres store), so
// that they store and export exactly the bytes the JSONL store writes.
//
// The codec works on the session package's Header and Event types, which
// this package cannot name (session imports it), so the codec is generic
// over them: the session package registers its Codec[session.Header,
// session.Event] when it is initialised, as it registers its store check
// in internal/logcheck, and a store takes it with Of. The codec adds
// nothing to session's exported surface.
package logline

import (
	"fmt"
	"sync"
)

// Codec is the session package's line codec over its header type H and
// event type E. No function blocks; a line carries no LF.
type Codec[H, E any] struct {
	// HeaderLine checks a new session's header as the JSONL store's Create
	// does and returns its log line.
	HeaderLine func(h H) ([]byte, error)
	// EventLines checks events as the JSONL store's Append does (they
	// continue the log of id at seq next; no retired vocabulary; compact
	// JSON payloads) and returns each one's log line as that store writes
	// it.
	EventLines func(id string, next int64, events []E) ([][]byte, error)
	// InterruptedTurn returns the closers the JSONL store's repairing load
	// appends to a log whose final turn is open (a tool/result per pending
	// call, step/end, turn/end {kind:"interrupted"}; none when it is
	// closed), with their lines as that load writes them.
	InterruptedTurn func(events []E) ([]E, [][]byte)
}

var (
	mu         sync.Mutex
	registered any // the one Codec
)

// Register installs the codec Of returns. The session package calls it
// once, from its init; a second call panics. It does not block.
func Register[H, E any](c Codec[H, E]) {
	mu.Lock()
	defer mu.Unlock()
	if registered != nil {
		panic("logline: Register called twice")
	}
	registered = c
}

// Of returns the registered codec. It panics when none is registered or
// when H and E are not the types it was registered for: a package that
// imports the session package runs its initialisers after session's, so
// a store can take the codec in a package-level variable. It does not
// block.
func Of[H, E any]() Codec[H, E] {
	mu.Lock()
	defer mu.Unlock()
	c, ok := registered.(Codec[H, E])
	if !ok {
		panic(fmt.Sprintf("logline: no codec registered for %T and %T (the session package registers it)", *new(H), *new(E)))
	}
	return c
}
