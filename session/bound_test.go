package session

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/internal/faultfs"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/stretchr/testify/require"
)

// plainStore is a Store that is not a JSONL (it embeds the Store
// interface, so JSONL's bindLog is not promoted): a live session over it
// writes through Store.Append and is released through releaseLog(id). It
// records both.
type plainStore struct {
	Store
	mu       sync.Mutex
	appends  [][]int64 // the seqs of each Append
	released []string
}

func (p *plainStore) Append(ctx context.Context, id string, events []Event) error {
	seqs := make([]int64, 0, len(events))
	for _, e := range events {
		seqs = append(seqs, e.Seq)
	}
	p.mu.Lock()
	p.appends = append(p.appends, seqs)
	p.mu.Unlock()
	return p.Store.Append(ctx, id, events)
}

func (p *plainStore) releaseLog(id string) {
	p.mu.Lock()
	p.released = append(p.released, id)
	p.mu.Unlock()
	p.Store.(*JSONL).releaseLog(id)
}

func (p *plainStore) appendedSeqs() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var all []int64
	for _, seqs := range p.appends {
		all = append(all, seqs...)
	}
	return all
}

// appendEveryShape appends events that use every optional field of the
// envelope (and payload bytes JSON may escape), flushed behind, then one
// written through.
func appendEveryShape(t *testing.T, reg *Sessions, l *Live) {
	t.Helper()
	user := map[string]any{
		"content": []map[string]string{{"type": "text", "text": "<a & b> \u2028 é \"q\""}},
		"source":  map[string]string{"kind": "user"}, "role": "user", "id": "u",
	}
	_, err := l.Append("user/message", user, Surface())
	require.NoError(t, err)
	assistant := json.RawMessage(`{ "turn": 1, "step": 1, "message": { "role": "assistant", "content": [],` +
		` "source": { "kind": "model", "provider": "p", "model": "m" }, "id": "a" } }`)
	_, err = l.Append("assistant/message", assistant, Sources(0), Surface())
	require.NoError(t, err)
	_, err = l.Append("feedback/record", nil, ignorable())
	require.NoError(t, err)
	ok, err := reg.Flush(context.Background(), l)
	require.NoError(t, err)
	require.True(t, ok)
	_, err = l.AppendThrough("turn/end", map[string]string{"kind": "completed"})
	require.NoError(t, err)
}

// A live session over a JSONL store holds its log's handle, and what it
// writes through it (behind, and through) is byte for byte what
// JSONL.Append writes for the same events.
func TestLiveOverJSONLWritesThroughItsBoundLog(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	reg := NewSessions(s)
	h := header("bound")
	l, err := reg.Create(ctx, h, nil)
	require.NoError(t, err)
	require.NotNil(t, l.log, "a Live over a JSONL is bound to its log")
	bound, ok := l.log.(*logState)
	require.True(t, ok)
	require.Same(t, s, bound.store)
	require.Same(t, s.existingState("bound"), bound, "bound to the store's state of that id")

	appendEveryShape(t, reg, l)

	ref := openStore(t)
	require.NoError(t, ref.Create(ctx, h, nil))
	require.NoError(t, ref.Append(ctx, "bound", l.Events()))
	want, err := os.ReadFile(logPathOf(t, ref, h))
	require.NoError(t, err)
	got, err := os.ReadFile(logPathOf(t, s, h))
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "the bound log writes what Store.Append writes")
	log, err := s.Inspect(ctx, "bound")
	require.NoError(t, err)
	require.Equal(t, l.Events(), log.Events)
	require.NoError(t, reg.Release(ctx, l))

	// A resumed session is bound again, to the same state.
	again, err := reg.Resume(ctx, "bound")
	require.NoError(t, err)
	require.Same(t, bound, again.log)
	_, err = again.AppendThrough("feedback/record", map[string]int{"after": 1})
	require.NoError(t, err)
	log, err = s.Inspect(ctx, "bound")
	require.NoError(t, err)
	require.Equal(t, again.Events(), log.Events, "the end-seed marker and the new event are durable")
	require.NoError(t, reg.Release(ctx, again))
}

// A Live over a Store that is not a JSONL has no bound log: it writes
// through Store.Append and is released through the store's releaseLog.
func TestLiveOverAnotherStoreWritesThroughStoreAppend(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	plain := &plainStore{Store: s}
	reg := NewSessions(plain)
	l, err := reg.Create(ctx, header("plain"), nil)
	require.NoError(t, err)
	require.Nil(t, l.log, "nothing to bind")

	appendEveryShape(t, reg, l)
	require.Equal(t, []int64{0, 1, 2, 3}, plain.appendedSeqs(), "every event went through Store.Append, once, in order")
	log, err := s.Inspect(ctx, "plain")
	require.NoError(t, err)
	require.Equal(t, l.Events(), log.Events)

	require.NoError(t, reg.Release(ctx, l))
	plain.mu.Lock()
	require.Equal(t, []string{"plain"}, plain.released, "released by id")
	plain.mu.Unlock()
}

// After the store closed, the bound log refuses with errClosed and writes
// nothing; the session reports it as its failed write.
func TestBoundAppendAfterCloseIsRefused(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	reg := NewSessions(s)
	h := header("shut")
	l, err := reg.Create(ctx, h, nil)
	require.NoError(t, err)
	_, err = l.AppendThrough("feedback/record", nil)
	require.NoError(t, err)
	path := logPathOf(t, s, h)
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	require.NoError(t, s.Close())
	err = l.log.append(l.epoch, []Event{ev(1, "feedback/record", "{}")})
	require.ErrorIs(t, err, errClosed, "the bound log itself")
	_, err = l.AppendThrough("late", nil)
	require.ErrorIs(t, err, errClosed, "the session's write through it")
	require.ErrorIs(t, err, ErrLogFailed)
	_, err = l.Append("later", nil)
	require.ErrorIs(t, err, ErrLogFailed, "the session refuses later appends")

	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "nothing was written")
	require.ErrorIs(t, reg.Release(ctx, l), errClosed)
}

// A bound append made while Close waits for a running writer is refused
// at once, not queued behind that writer (which Close would then wait
// for, writing after Close began).
func TestBoundAppendRacingCloseIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		gates := faultfs.New(nil)
		s := openStore(t, WithFS(gates))
		t.Cleanup(gates.ReleaseSyncs) // before Close, should the test fail with the gate shut
		reg := NewSessions(s)
		l, err := reg.Create(ctx, header("race"), nil)
		require.NoError(t, err)

		gates.HoldSyncs()
		_, err = l.Append("team/task", nil)
		require.NoError(t, err)
		synctest.Wait() // the flusher writes it inline through the bound log, held at its sync
		closed := make(chan error, 1)
		go func() { closed <- s.Close() }()
		synctest.Wait()
		require.True(t, s.isClosed())
		require.Empty(t, closed, "Close waits for the running writer")

		appended := make(chan error, 1)
		go func() { appended <- l.log.append(l.epoch, []Event{ev(1, "late", "{}")}) }()
		synctest.Wait()
		select {
		case err := <-appended:
			require.ErrorIs(t, err, errClosed)
		default:
			t.Fatal("the bound append was queued behind the running writer instead of refused")
		}

		gates.ReleaseSyncs()
		require.NoError(t, <-closed)
		ok, err := reg.Flush(ctx, l)
		require.NoError(t, err)
		require.True(t, ok, "the held write completed")
		reopened := readStore(t, s.Root())
		require.Equal(t, []string{"team/task"}, storedTypes(t, reopened, "race"), "the refused append wrote nothing")
		require.NoError(t, reg.Release(ctx, l))
	})
}

// Sessions.Release of a bound Live releases its log through the handle:
// its kept file becomes evictable, and the next log that needs the only
// slot takes it.
func TestReleasingABoundLiveReleasesItsLog(t *testing.T) {
	ctx := context.Background()
	s, counts := keptStore(t, withKeptFiles(1))
	reg := NewSessions(s)
	l, err := reg.Create(ctx, header("one"), nil)
	require.NoError(t, err)
	require.NotNil(t, l.log)
	one := logPathOf(t, s, header("one"))
	_, err = l.Append("feedback/record", nil)
	require.NoError(t, err)
	_, err = l.AppendThrough("feedback/record", nil)
	require.NoError(t, err)
	require.Equal(t, []string{one}, counts.openNow(), "the live log keeps its file")

	st := s.existingState("one")
	released := func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.released
	}
	require.False(t, released())
	require.NoError(t, reg.Release(ctx, l))
	require.True(t, released(), "Release released the log")
	require.True(t, st.evictable.Load(), "its kept file is evictable")
	require.Equal(t, []string{one}, counts.openNow(), "but still open")
	require.NoError(t, reg.Release(ctx, l), "a second release is a no-op")

	two := createLog(t, s, "two")
	require.Equal(t, 1, counts.closed(one), "the released log gave up its slot, closing its file")
	require.Equal(t, []string{two}, counts.openNow())
	require.Equal(t, []string{"feedback/record", "feedback/record"}, storedTypes(t, readStore(t, s.Root()), "one"))
}

const runWriterFn = "session.(*JSONL).runWriter"

// An uncancellable Append that finds no writer writes its own batch on its
// own goroutine; the batches queued while it writes (uncancellable or not)
// go to a writer goroutine that takes over its file. Every append is
// acknowledged, the lines are on disk in seq order, and no writer is left.
func TestInlineAppendHandsQueuedBatchesToAWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		counts := newCountFS(nil)
		gates := faultfs.New(counts)
		s, err := OpenJSONL(t.TempDir(), WithFS(gates))
		require.NoError(t, err)
		t.Cleanup(func() {
			require.NoError(t, s.Close())
			require.Empty(t, counts.openNow(), "Close closes the kept file")
			require.Zero(t, counts.doubleCloses())
		})
		t.Cleanup(gates.ReleaseSyncs) // runs first
		path := createLog(t, s, "in") // seqs 0, 1; Create keeps its descriptor

		require.NoError(t, s.Append(context.Background(), "in", turnEvents(2, 1)))
		require.Zero(t, s.writers.state.Load(), "a lone inline append wrote its batch and left the gate")
		require.Zero(t, testkit.GoroutinesIn(runWriterFn), "without a writer goroutine")
		syncs := gates.Syncs()

		held := gates.HoldSyncs()
		results := map[int64]chan error{}
		appendAsync := func(seq int64, ctx context.Context) {
			done := make(chan error, 1)
			results[seq] = done
			go func() { done <- s.Append(ctx, "in", turnEvents(seq, 1)) }()
		}
		appendAsync(3, context.Background())
		<-held
		synctest.Wait()
		require.Equal(t, int64(2), s.writers.state.Load(), "one writer admitted: the appender itself")
		require.Zero(t, testkit.GoroutinesIn(runWriterFn), "the inline append started no writer goroutine")

		cancellable, cancel := context.WithCancel(context.Background())
		defer cancel()
		for seq, ctx := range []context.Context{context.Background(), cancellable, cancellable, context.Background()} {
			appendAsync(int64(4+seq), ctx)
			synctest.Wait() // queued before the next one: seq order
		}
		st := s.existingState("in")
		st.mu.Lock()
		queued := len(st.queue)
		st.mu.Unlock()
		require.Equal(t, 4, queued, "every later append queued behind the inline write")
		for seq, done := range results {
			require.Empty(t, done, "seq %d acknowledged while the inline write is held", seq)
		}

		gates.ReleaseSyncs()
		for _, seq := range slices.Sorted(maps.Keys(results)) {
			require.NoError(t, <-results[seq], "seq %d", seq)
		}
		synctest.Wait()
		require.Zero(t, testkit.GoroutinesIn(runWriterFn), "the writer goroutine exited with the queue empty")
		require.Zero(t, s.writers.state.Load(), "no writer admitted, gate open")
		st.mu.Lock()
		require.False(t, st.writing)
		require.Empty(t, st.queue)
		st.mu.Unlock()
		require.Equal(t, 2, gates.Syncs()-syncs, "the inline write, then one group commit of the queued batches")
		requireStored(t, s, "in", 8)
		require.Zero(t, counts.opened(path), "the writer goroutine wrote through the inline writer's file")
		require.Equal(t, []string{path}, counts.openNow(), "which is kept, once")
	})
}

// Flush and Release only act on a Live of their own registry that is
// still live: a released Live, a stale one whose id is live again, a Live
// of another registry (even with the same id) and nil are errNotLive to
// Flush and no-ops to Release.
func TestFlushAndReleaseOfALiveThatIsNotLiveHere(t *testing.T) {
	ctx := context.Background()
	reg := NewSessions(openStore(t))
	other := NewSessions(nil)
	mine, err := reg.Create(ctx, header("mine"), nil)
	require.NoError(t, err)
	twin, err := other.Create(ctx, header("mine"), nil) // same id, another registry
	require.NoError(t, err)
	theirs, err := other.Create(ctx, header("theirs"), nil)
	require.NoError(t, err)

	for _, foreign := range []*Live{twin, theirs} {
		ok, err := reg.Flush(ctx, foreign)
		require.ErrorIs(t, err, errNotLive)
		require.EqualError(t, err, `session "`+foreign.ID()+`" is not live in this store`)
		require.False(t, ok)
		require.NoError(t, reg.Release(ctx, foreign), "no-op")
		require.Same(t, foreign, other.Get(foreign.ID()), "still live in its own registry")
		_, err = foreign.Append("feedback/record", nil)
		require.NoError(t, err, "and appendable")
	}
	require.Same(t, mine, reg.Get("mine"), "releasing the twin did not drop this registry's session")

	_, err = reg.Flush(ctx, nil)
	require.ErrorIs(t, err, errNotLive)
	require.EqualError(t, err, `session "<nil>" is not live in this store`)
	require.NoError(t, reg.Release(ctx, nil))

	require.NoError(t, reg.Release(ctx, mine))
	ok, err := reg.Flush(ctx, mine)
	require.ErrorIs(t, err, errNotLive, "released")
	require.False(t, ok)

	successor, err := reg.Resume(ctx, "mine")
	require.NoError(t, err)
	_, err = reg.Flush(ctx, mine)
	require.ErrorIs(t, err, errNotLive, "stale, although its id is live again")
	require.NoError(t, reg.Release(ctx, mine), "no-op")
	require.Same(t, successor, reg.Get("mine"), "releasing the stale Live left its successor live")
	ok, err = reg.Flush(ctx, successor)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, reg.Release(ctx, successor))

	require.NoError(t, other.Release(ctx, twin))
	require.NoError(t, other.Release(ctx, theirs))
}
