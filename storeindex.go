package dsh

import (
	"context"
	"sync"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/session"
)

// storeIndex is the derived SQLite index of the runtime's JSONL store
// folder (index.FileName in it): opened on first use, brought up to date
// by every use, closed with the runtime. It is derived state: deleting the
// file loses nothing, the next use rebuilds it.
type storeIndex struct {
	root     string            // the JSONL store folder; "" keeps no index
	noIndex  bool              // Options.NoIndex: every read goes to the logs
	sessions *session.Sessions // the runtime's live sessions over that store

	mu     sync.Mutex
	db     *index.DB
	closed bool
}

// newStoreIndex is the index of the JSONL store folder root ("" for
// none: a memory-only runtime or a Postgres store); with noIndex the
// runtime reads the logs themselves instead.
func newStoreIndex(root string, noIndex bool, sessions *session.Sessions) *storeIndex {
	return &storeIndex{root: root, noIndex: noIndex, sessions: sessions}
}

// open returns the index, opening (or building) its file on first use;
// nil with a nil error when the runtime keeps none. A done ctx is
// fault.Cancelled. It blocks on opening the file, serialized with other
// first uses.
func (x *storeIndex) open(ctx context.Context) (*index.DB, error) {
	if x.noIndex || x.root == "" {
		return nil, nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, fault.New(fault.Closed, "dsh: the runtime is closed", nil)
	}
	if ctx.Err() != nil {
		return nil, fault.New(fault.Cancelled, "dsh: reading the session index was cancelled", context.Cause(ctx))
	}
	if x.db == nil {
		db, err := index.Open(ctx, x.root, x.sessions)
		if err != nil {
			return nil, err
		}
		x.db = db
	}
	return x.db, nil
}

// close closes the index file when it was opened; later uses fail with
// fault.Closed. It is idempotent.
func (x *storeIndex) close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed = true
	if x.db == nil {
		return nil
	}
	err := x.db.Close()
	x.db = nil
	return err
}

// indexRoot is the JSONL store folder of opts, which keeps the derived
// index; "" for memory and a Postgres store.
func indexRoot(opts Options) string {
	if isPostgresURL(opts.Dir) {
		return ""
	}
	return opts.Dir
}
