package session

import (
	"context"
	"fmt"
	"io/fs"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/internal/faultfs"
	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/stretchr/testify/assert"
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

// HoldsOwnDescriptor looks past the seed only, whether the session was
// created with its events or resumed from a stored log.
func TestHoldsOwnDescriptorLooksPastTheSeedOnly(t *testing.T) {
	at := func(typ string, seq int64) Event { return Event{Type: typ, Seq: seq, Data: []byte(`{}`)} }
	descriptor, plain := vocab.TypeSubagentDescriptor, vocab.TypeUserMessage
	one, beyond := 1, 5
	cases := []struct {
		id     string
		seed   *int
		events []Event
		want   bool
	}{
		{"own", nil, []Event{at(descriptor, 0)}, true},
		{"plain", nil, []Event{at(plain, 0)}, false},
		{"inherited", &one, []Event{at(descriptor, 0), at(plain, 1)}, false},
		{"after-seed", &one, []Event{at(plain, 0), at(descriptor, 1)}, true},
		{"seed-longer-than-its-events", &beyond, []Event{at(plain, 0), at(descriptor, 1)}, false},
	}
	for _, c := range cases {
		s := NewSessions(nil)
		created, err := s.Create(context.Background(), Header{ID: c.id, SeedLength: c.seed}, c.events)
		require.NoError(t, err, c.id)
		require.Equal(t, c.want, created.HoldsOwnDescriptor(), "%s created", c.id)
		require.NoError(t, s.Release(context.Background(), created))
		resumed, err := s.ResumeLoaded(&Log{Header: Header{ID: c.id, SeedLength: c.seed}, Events: c.events})
		require.NoError(t, err, c.id)
		require.Equal(t, c.want, resumed.HoldsOwnDescriptor(), "%s resumed", c.id)
		require.NoError(t, s.Release(context.Background(), resumed))
	}
}

// A descriptor appended past the seed shows at once, and stays; one
// appended inside a seed longer than the events so far never shows.
func TestHoldsOwnDescriptorSeesEveryAppend(t *testing.T) {
	s := NewSessions(nil)
	three := 3
	l, err := s.Create(context.Background(), Header{ID: "late", SeedLength: &three}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Release(context.Background(), l)) })
	_, err = l.Append(vocab.TypeSubagentDescriptor, map[string]string{})
	require.NoError(t, err)
	require.False(t, l.HoldsOwnDescriptor(), "seq 0 is inside the seed")
	for range 2 {
		_, err = l.Append(vocab.TypeUserMessage, map[string]string{})
		require.NoError(t, err)
		require.False(t, l.HoldsOwnDescriptor(), "plain events")
	}
	_, err = l.Append(vocab.TypeSubagentDescriptor, map[string]string{})
	require.NoError(t, err)
	require.True(t, l.HoldsOwnDescriptor(), "seq 3 is past the seed")
	_, err = l.Append(vocab.TypeUserMessage, map[string]string{})
	require.NoError(t, err)
	require.True(t, l.HoldsOwnDescriptor(), "it stays")
}

// The promise a lock-free reader relies on (the root's prompt fence): a
// reader that learns that an Append of a descriptor returned, by any
// synchronization, sees it, while appends race on other goroutines. Run
// with -race.
func TestHoldsOwnDescriptorSeesAnAppendThatReturnedOnAnotherGoroutine(t *testing.T) {
	s := NewSessions(nil)
	for round := range 50 {
		l, err := s.Create(context.Background(), Header{ID: fmt.Sprint("racing-", round)}, nil)
		require.NoError(t, err)
		appended := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(3)
		go func() {
			defer wg.Done()
			for range 20 {
				_, _ = l.Append(vocab.TypeUserMessage, map[string]string{})
			}
		}()
		go func() {
			defer wg.Done()
			_, err := l.Append(vocab.TypeSubagentDescriptor, map[string]string{})
			assert.NoError(t, err)
			close(appended)
		}()
		go func() {
			defer wg.Done()
			for !l.HoldsOwnDescriptor() {
				select {
				case <-appended:
					assert.True(t, l.HoldsOwnDescriptor(), "round %d: the returned append is seen", round)
					return
				default:
					runtime.Gosched()
				}
			}
		}()
		wg.Wait()
		require.True(t, l.HoldsOwnDescriptor())
		require.NoError(t, s.Release(context.Background(), l))
	}
}
