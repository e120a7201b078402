package session

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/faultfs"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/stretchr/testify/require"
)

func TestMemoryOnlySessions(t *testing.T) {
	ctx := context.Background()
	reg := NewSessions(nil)
	require.Nil(t, reg.Store())
	l, err := reg.Create(ctx, header("mem"), nil)
	require.NoError(t, err)
	e, err := l.Append("user/message", json.RawMessage(`{"id":"m"}`), Surface(), Sources(1, 2))
	require.NoError(t, err)
	require.Equal(t, int64(0), e.Seq)
	require.Equal(t, json.RawMessage(`"append"`), e.SurfaceOp)
	require.Equal(t, []int64{1, 2}, e.SourceEventSeqs)
	ok, err := reg.Flush(ctx, l)
	require.NoError(t, err)
	require.False(t, ok, "no store: nothing confirms durability")
	_, err = reg.Resume(ctx, "mem")
	require.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, reg.Release(ctx, l))
}

func TestCreatePublishesAndRefusesDuplicates(t *testing.T) {
	ctx := context.Background()
	reg := NewSessions(openStore(t))
	var changes []Change
	var mu sync.Mutex
	cancel := reg.Subscribe(func(c Change) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, c)
	})
	defer cancel()
	reg.Subscribe(func(Change) { panic("a broken listener") })

	a, err := reg.Create(ctx, header("a"), nil)
	require.NoError(t, err)
	b, err := reg.Create(ctx, Header{ID: "b"}, []Event{ev(0, "subagent/descriptor", `{"version":1}`)})
	require.NoError(t, err)
	require.NotZero(t, b.Header().CreatedAt, "a zero createdAt becomes now")
	require.Equal(t, []*Live{a, b}, reg.List())
	require.Same(t, a, reg.Get("a"))
	require.Nil(t, reg.Get("nope"))

	_, err = reg.Create(ctx, header("a"), nil)
	require.ErrorIs(t, err, ErrExists)
	require.Equal(t, []string{"subagent/descriptor", vocab.TypeSessionEndSeed}, types(b.Events()), "a seed is closed by session/end-seed")
	require.Equal(t, 0, a.Len(), "no seed, no marker")

	_, err = a.Append("turn/start", map[string]int{"turn": 1})
	require.NoError(t, err)
	require.NoError(t, reg.Release(ctx, a))
	require.NoError(t, reg.Release(ctx, a), "release is idempotent")
	_, err = a.Append("x", nil)
	require.ErrorIs(t, err, errNotLive)
	_, err = reg.Flush(ctx, a)
	require.ErrorIs(t, err, errNotLive)
	require.Equal(t, []*Live{b}, reg.List())
	require.NoError(t, reg.Release(ctx, b))

	mu.Lock()
	defer mu.Unlock()
	kinds := make([]ChangeKind, 0, len(changes))
	for _, c := range changes {
		kinds = append(kinds, c.Kind)
	}
	require.Equal(t, []ChangeKind{Added, Added, Appended, Removed, Removed}, kinds)
	require.Equal(t, "turn/start", changes[2].Event.Type)
}

func types(events []Event) []string {
	out := make([]string, 0, len(events))
	for _, e := range events {
		out = append(out, e.Type)
	}
	return out
}

func TestSessionsFlushConfirmsDurability(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	reg := NewSessions(s)
	l, err := reg.Create(ctx, header("dur"), nil)
	require.NoError(t, err)
	for i := range 50 {
		_, err := l.Append("feedback/record", map[string]int{"i": i})
		require.NoError(t, err)
	}
	ok, err := reg.Flush(ctx, l)
	require.NoError(t, err)
	require.True(t, ok)

	reopened, err := OpenJSONL(s.Root())
	require.NoError(t, err)
	defer reopened.Close()
	log, err := reopened.Inspect(ctx, "dur")
	require.NoError(t, err)
	require.Equal(t, l.Events(), log.Events, "a flushed session is on disk as it is in memory")
	require.NoError(t, reg.Release(ctx, l))
}

func TestFlushHonoursCancelledContext(t *testing.T) {
	gates := faultfs.New(nil)
	reg := NewSessions(openStore(t, WithFS(gates)))
	l, err := reg.Create(context.Background(), header("cx"), nil)
	require.NoError(t, err)

	gates.HoldSyncs()
	_, err = l.Append("feedback/record", nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ok, err := reg.Flush(ctx, l)
	require.ErrorIs(t, err, context.Canceled, "the write is held, so only ctx can end the wait")
	require.False(t, ok)

	gates.ReleaseSyncs()
	ok, err = reg.Flush(context.Background(), l)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, reg.Release(context.Background(), l))
}

func TestCancelledAppendStillWrites(t *testing.T) {
	gates := faultfs.New(nil)
	s := openStore(t, WithFS(gates))
	require.NoError(t, s.Create(context.Background(), header("late"), nil))
	held := gates.HoldSyncs()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Append(ctx, "late", turnEvents(0, 1)) }()
	<-held // the batch is queued and being synced
	cancel()
	require.ErrorIs(t, <-done, context.Canceled, "not acknowledged")
	gates.ReleaseSyncs()
	ok, err := s.Flush(context.Background(), "late")
	require.NoError(t, err)
	require.True(t, ok)
	log, err := s.Inspect(context.Background(), "late")
	require.NoError(t, err)
	require.Equal(t, turnEvents(0, 1), log.Events, "but still written: a cancelled wait does not withdraw events")
}

func TestResumeAfterCrashTruncatedLog(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	h := header("crashed")
	path := writeRaw(t, s, h, headerLineOf(t, h)+lines(openTurnLines...)+`{"type":"assistant/chunk","seq":6,"ti`)
	reg := NewSessions(s)
	l, err := reg.Resume(ctx, "crashed")
	require.NoError(t, err)
	require.Equal(t, 11, l.Len(), "6 stored, 4 closers, the end-seed marker")
	require.Equal(t, vocab.TypeSessionEndSeed, l.Events()[10].Type)

	_, err = reg.Resume(ctx, "crashed")
	require.ErrorIs(t, err, ErrExists, "a live session cannot be resumed again")
	e, err := l.Append("turn/start", map[string]int{"turn": 3})
	require.NoError(t, err)
	require.Equal(t, int64(11), e.Seq)
	require.NoError(t, reg.Release(ctx, l))

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	repaired := headerLineOf(t, h) + lines(openTurnLines...) + lines(openTurnClosers...)
	require.True(t, strings.HasPrefix(string(raw), repaired), "torn fragment cut, closers appended")
	require.Equal(t, 2, strings.Count(string(raw[len(repaired):]), "\n"), "then the marker and the new event")
	log, err := s.Inspect(ctx, "crashed")
	require.NoError(t, err)
	require.Equal(t, []string{vocab.TypeSessionEndSeed, "turn/start"}, types(log.Events[10:]))

	again, err := reg.Resume(ctx, "crashed")
	require.NoError(t, err)
	require.Equal(t, 14, again.Len(), "turn 3 closed by the second load, then a new marker")
	require.NoError(t, reg.Release(ctx, again))
}

func TestAppendedNotificationsFollowSeqOrder(t *testing.T) {
	ctx := context.Background()
	reg := NewSessions(nil)
	l, err := reg.Create(ctx, header("order"), nil)
	require.NoError(t, err)
	var seqs []int64
	var mu sync.Mutex
	defer reg.Subscribe(func(c Change) {
		mu.Lock()
		defer mu.Unlock()
		seqs = append(seqs, c.Event.Seq)
	})()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_, err := l.Append("feedback/record", nil)
				require.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	for i, s := range seqs {
		require.Equal(t, int64(i), s)
	}
	require.Len(t, seqs, 400)
}

func TestListKeepsCreationOrderAcrossReleases(t *testing.T) {
	ctx := context.Background()
	reg := NewSessions(nil)
	create := func(id string) *Live {
		l, err := reg.Create(ctx, header(id), nil)
		require.NoError(t, err)
		return l
	}
	a, b, c := create("a"), create("b"), create("c")
	require.NoError(t, reg.Release(ctx, b))
	d := create("b") // the released id again, now the newest
	require.Equal(t, []*Live{a, c, d}, reg.List())
}
