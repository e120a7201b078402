package pgstore

import (
	"context"
	"runtime"
	"testing"

	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// watching is how many lease watchers s holds.
func watching(s *Store) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watchers)
}

// gcRounds bounds the collections a test runs while it waits for the
// cleanups of unreachable registries.
const gcRounds = 10000

// The lease watch a Sessions registry starts on its store ends with the
// registry: the store of 100 registries that are garbage but one holds the
// one watcher; a closed store holds none. Opening and closing many stores,
// each with a registry, leaks no goroutine (TestMain checks).
func TestTheLeaseWatchEndsWithItsRegistryOrItsStore(t *testing.T) {
	dsn := cluster.Database(t)
	s := openStore(t, dsn)
	for range 100 {
		session.NewSessions(s)
	}
	kept := session.NewSessions(s)
	for i := 0; i < gcRounds && watching(s) > 1; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	require.Equal(t, 1, watching(s), "only the live registry watches")
	runtime.KeepAlive(kept)

	for range 20 {
		st, err := Open(context.Background(), dsn)
		require.NoError(t, err)
		sessions := session.NewSessions(st)
		require.Equal(t, 1, watching(st))
		require.NoError(t, st.Close())
		require.Zero(t, watching(st), "a closed store watches for no registry")
		runtime.KeepAlive(sessions)
	}
}
