package session

import (
	"context"
	"io/fs"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/internal/faultfs"
	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/stretchr/testify/require"
)

// syncerFS records the goroutine of every data sync made through it.
type syncerFS struct {
	sessionfs.FS
	mu      sync.Mutex
	syncers []uint64
}

func (s *syncerFS) OpenFile(name string, flag int, perm fs.FileMode) (sessionfs.File, error) {
	f, err := s.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return syncerFile{File: f, fs: s}, nil
}

// since returns the goroutines of the syncs after the first n.
func (s *syncerFS) since(n int) []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]uint64(nil), s.syncers[n:]...)
}

func (s *syncerFS) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.syncers)
}

type syncerFile struct {
	sessionfs.File
	fs *syncerFS
}

func (f syncerFile) Sync() error {
	f.fs.mu.Lock()
	f.fs.syncers = append(f.fs.syncers, testkit.GoroutineID())
	f.fs.mu.Unlock()
	return f.File.Sync()
}

// storedTypes returns the types of the events stored for id, read straight
// from disk without any Flush.
func storedTypes(t *testing.T, s *JSONL, id string) []string {
	t.Helper()
	log, err := s.Inspect(context.Background(), id)
	require.NoError(t, err)
	return types(log.Events)
}

func TestAppendThroughIsDurableOnReturn(t *testing.T) {
	ctx := context.Background()
	syncers := &syncerFS{FS: sessionfs.OSFS{}}
	s := openStore(t, WithFS(syncers))
	reg := NewSessions(s)
	l, err := reg.Create(ctx, header("thru"), nil)
	require.NoError(t, err)

	before := syncers.count()
	e, err := l.AppendThrough("turn/end", map[string]int{"turn": 1})
	require.NoError(t, err)
	require.Equal(t, int64(0), e.Seq)
	require.Equal(t, []string{"turn/end"}, storedTypes(t, s, "thru"), "on disk when AppendThrough returns, without Flush")
	require.Equal(t, []uint64{testkit.GoroutineID()}, syncers.since(before), "written by the caller: one sync, on this goroutine")

	_, err = l.Append("feedback/record", nil)
	require.NoError(t, err)
	ok, err := reg.Flush(ctx, l)
	require.NoError(t, err)
	require.True(t, ok, "write-behind resumes after a write-through")
	require.Equal(t, []string{"turn/end", "feedback/record"}, storedTypes(t, s, "thru"))
	require.NoError(t, reg.Release(ctx, l))
}

func TestAppendThroughWaitsForARunningFlusher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gates := faultfs.New(nil)
		s := openStore(t, WithFS(gates))
		t.Cleanup(gates.ReleaseSyncs) // before Close, should the test fail with the gate shut
		reg := NewSessions(s)
		l, err := reg.Create(context.Background(), header("behind"), nil)
		require.NoError(t, err)

		gates.HoldSyncs()
		for _, typ := range []string{"hook/invoked", "hook/result"} {
			_, err := l.Append(typ, nil)
			require.NoError(t, err)
		}
		synctest.Wait() // the flusher is syncing a, b is pending behind it
		done := make(chan error)
		go func() {
			_, err := l.AppendThrough("plan/mode", nil)
			done <- err
		}()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("AppendThrough returned (%v) while the flusher's write was held", err)
		default:
		}
		require.Equal(t, 3, l.Len(), "c is in memory at once")

		gates.ReleaseSyncs()
		require.NoError(t, <-done)
		require.Equal(t, []string{"hook/invoked", "hook/result", "plan/mode"}, storedTypes(t, s, "behind"), "every pending event is durable when it returns")
		require.NoError(t, reg.Release(context.Background(), l))
	})
}

func TestAppendThroughReportsAFailedWrite(t *testing.T) {
	ctx := context.Background()
	faults := faultfs.New(nil)
	s := openStore(t, WithFS(faults))
	reg := NewSessions(s)
	l, err := reg.Create(ctx, header("thru-f"), nil)
	require.NoError(t, err)

	faults.FailSync(1, syscall.EIO)
	e, err := l.AppendThrough("turn/end", nil)
	require.ErrorIs(t, err, ErrLogFailed)
	require.ErrorIs(t, err, syscall.EIO)
	require.Equal(t, int64(0), e.Seq, "the event was added")
	require.Equal(t, 1, l.Len())
	require.Empty(t, storedTypes(t, s, "thru-f"), "but not written")

	_, err = l.Append("feedback/record", nil)
	require.ErrorIs(t, err, ErrLogFailed, "later appends are refused")
	_, err = l.AppendThrough("feedback/record", nil)
	require.ErrorIs(t, err, ErrLogFailed)
	require.Equal(t, 1, l.Len())
	require.ErrorIs(t, reg.Release(ctx, l), ErrLogFailed)
}

func TestAppendThroughWithoutAStoreIsAppend(t *testing.T) {
	ctx := context.Background()
	reg := NewSessions(nil)
	l, err := reg.Create(ctx, header("mem-thru"), nil)
	require.NoError(t, err)
	var seen []Change
	defer reg.Subscribe(func(c Change) { seen = append(seen, c) })()

	e, err := l.AppendThrough("user/message", map[string]string{"id": "m"}, Surface())
	require.NoError(t, err)
	require.Equal(t, int64(0), e.Seq)
	require.Equal(t, `"append"`, string(e.SurfaceOp))
	require.Equal(t, []Event{e}, l.Events())
	require.Len(t, seen, 1)
	require.Equal(t, Appended, seen[0].Kind)
	require.Equal(t, e, seen[0].Event)
	ok, err := reg.Flush(ctx, l)
	require.NoError(t, err)
	require.False(t, ok, "no store: nothing confirms durability")

	require.NoError(t, reg.Release(ctx, l))
	_, err = l.AppendThrough("x", nil)
	require.ErrorIs(t, err, errNotLive)
}

// TestAppendRefusesAnOptionThatBreaksTheEnvelope: an AppendOption may set
// any field; invalid JSON it puts in data or surfaceOp is refused by
// Append (ErrInvalid) before anything is written, and the log stays
// readable and appendable.
func TestAppendRefusesAnOptionThatBreaksTheEnvelope(t *testing.T) {
	for name, opt := range map[string]AppendOption{
		"surfaceOp": func(e *Event) { e.SurfaceOp = []byte(`{"op":`) },
		"data":      func(e *Event) { e.Data = []byte(`not json`) },
	} {
		t.Run(name, func(t *testing.T) {
			store, err := OpenJSONL(t.TempDir())
			require.NoError(t, err)
			defer store.Close()
			s := NewSessions(store)
			l, err := s.Create(context.Background(), header("a"), nil)
			require.NoError(t, err)
			_, err = l.AppendThrough("feedback/record", map[string]int{"n": 1}, opt)
			require.ErrorIs(t, err, ErrInvalid)
			_, err = l.Append("feedback/record", map[string]int{"n": 2}, opt)
			require.ErrorIs(t, err, ErrInvalid)
			_, err = l.AppendThrough("feedback/record", map[string]int{"n": 3})
			require.NoError(t, err)
			require.Equal(t, []string{"feedback/record"}, storedTypes(t, store, "a"))
		})
	}
}
