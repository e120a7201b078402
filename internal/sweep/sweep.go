// Package sweep is the seam through which a serve node asks its store to
// take over the sessions other nodes left behind: a store whose leases
// expire (Postgres) registers its sweep here at init, so the seam adds
// nothing to the public surface; serve finds it with Of.
package sweep

import (
	"context"
	"sync"
)

// Func takes over, once, every session whose lease expired without being
// released (its holder died or stalls), closes the turn it left open and
// releases it, then wakes every session with pending inbox messages that
// no one holds live (for a listening process to take over and run); it
// returns the ids it took over. It blocks on the store.
type Func func(ctx context.Context) (swept []string, err error)

var (
	mu      sync.RWMutex
	finders []func(store any) (Func, bool)
)

// Register adds a finder that recognizes a store that can sweep; the
// stores call it at init.
func Register(find func(store any) (Func, bool)) {
	mu.Lock()
	defer mu.Unlock()
	finders = append(finders, find)
}

// Of returns the sweep of store, false when it has none.
func Of(store any) (Func, bool) {
	mu.RLock()
	defer mu.RUnlock()
	for _, find := range finders {
		if fn, ok := find(store); ok {
			return fn, true
		}
	}
	return nil, false
}
