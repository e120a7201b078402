package session

import (
	"context"
	"sync"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/stretchr/testify/require"
)

// losingStore is a JSONL store whose leases the test declares lost, as a
// Postgres renewal finds them, through the lease watch seam.
type losingStore struct {
	*JSONL
	mu       sync.Mutex
	watchers []func(id string, epoch Epoch)
}

// WatchLeases makes losingStore a LeaseWatcher.
func (s *losingStore) WatchLeases(lost func(id string, epoch Epoch)) (stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchers = append(s.watchers, lost)
	return func() {}
}

func (s *losingStore) lose(id string, epoch Epoch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watchers {
		w(id, epoch)
	}
}

// A lease its store finds lost fails the live session writing under it
// at once, as a refused append would: the failure hook hears of it once
// (with FENCED), later appends and flushes are refused. A loss of another
// epoch, or of a session that is no longer live, changes nothing.
func TestALostLeaseFencesTheLiveSessionWritingUnderIt(t *testing.T) {
	ctx := context.Background()
	store := &losingStore{JSONL: openStore(t)}
	reg := NewSessions(store)
	l, err := reg.Create(ctx, header("held"), nil)
	require.NoError(t, err)
	_, err = l.Append("goal/change", nil)
	require.NoError(t, err)
	_, err = reg.Flush(ctx, l)
	require.NoError(t, err)
	heard := make(chan error, 2)
	l.OnWriteFailure(func(unwritten []Event, err error) {
		require.Empty(t, unwritten, "everything appended was durable")
		heard <- err
	})

	store.lose("held", l.epoch+1)
	store.lose("gone", l.epoch)
	_, err = l.Append("team/member", nil)
	require.NoError(t, err, "another epoch's loss is not this session's")
	_, err = reg.Flush(ctx, l)
	require.NoError(t, err)

	store.lose("held", l.epoch)
	err = <-heard
	require.ErrorIs(t, err, fault.Fenced)
	require.ErrorIs(t, err, ErrLogFailed)
	_, err = l.Append("note/c", nil)
	require.ErrorIs(t, err, fault.Fenced)
	_, err = reg.Flush(ctx, l)
	require.ErrorIs(t, err, fault.Fenced)
	store.lose("held", l.epoch)
	require.Empty(t, heard, "the hook hears of the fence once")
	require.ErrorIs(t, reg.Release(ctx, l), fault.Fenced)

	again, err := reg.Resume(ctx, "held")
	require.NoError(t, err)
	store.lose("held", l.epoch)
	_, err = again.Append("note/d", nil)
	require.NoError(t, err, "a loss of the released epoch does not reach the resumed session")
	require.NoError(t, reg.Release(ctx, again))
}
