// Package storetest is the conformance suite every session.Fenced store
// passes: the JSONL store and the Postgres store run the same cases. It
// also writes logs in the JSONL store's exact bytes without its fsyncs
// (WriteSynthetic) and wraps a store so that every read relists it
// (RelistingStore), for tests and benchmarks. Only _test.go files import
// it.
package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// World makes one empty backing store for a test and returns the function
// that opens a handle on it: each call is another process's view (its
// own leases), closed when the test ends.
type World func(t *testing.T) (open func() session.Fenced)

// Run runs every case against the stores newWorld makes; the stores must
// have a durable inbox (durable.Of).
func Run(t *testing.T, newWorld World) {
	cases := []struct {
		name string
		run  func(t *testing.T, open func() session.Fenced)
	}{
		{"CreateInspectListRoundTrip", createInspectList},
		{"RefusalsAreTyped", refusals},
		{"StaleEpochIsFencedAndWritesNothing", staleEpoch},
		{"TakeoverOnlyAfterRelease", takeoverAfterRelease},
		{"ContiguousSeqUnderConcurrentWriters", concurrentWriters},
		{"LoadClosesAnInterruptedTurn", interruptedTurn},
		{"RegistryHoldsTheLeaseWhileLive", registryLease},
		{"ReleaseInAnyOrderThenResumeChildFirst", childFirstRelease},
		{"InboxAdmitIsIdempotentFIFOAndClaimedByTheMessageEvent", inboxAdmitAndClaim},
		{"InboxAdmitsOnlyTheExactLiveParent", inboxAuthority},
		{"InboxAdmitsAUserPromptToATopLevelSessionOnly", inboxUserPrompt},
		{"InboxDrainCutOffRefusesOrAdmitsNeverBoth", inboxDrainCutOff},
		{"InboxDrainCutOffCoversReleasedChildren", inboxDrainCoversReleasedChildren},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newWorld(t)) })
	}
}

// Files maps every file under a JSONL root, but the lease files, to its
// bytes, keyed by its path relative to root.
func Files(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || logpath.IsLeaseFile(d.Name()) {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		out[rel] = string(data)
		return err
	}))
	return out
}

// Header is a valid header for id (a child of parent when parent is set).
func Header(id, parent string) session.Header {
	h := session.Header{ID: id, CreatedAt: 1789000001000, Cwd: "/work/project"}
	if parent != "" {
		h.ParentSession, h.Origin, h.DelegationDepth = parent, "subagent", 1
	}
	return h
}

// Note is a plain event at seq.
func Note(seq int64, text string) session.Event {
	return session.Event{Type: "feedback/record", Seq: seq, Time: 1785544945198 + seq, Data: json.RawMessage(fmt.Sprintf(`{"text":%q}`, text))}
}

var ctx = context.Background()

func types(t *testing.T, s session.Store, id string) []string {
	t.Helper()
	log, err := s.Inspect(ctx, id)
	require.NoError(t, err)
	var out []string
	for i, e := range log.Events {
		require.Equal(t, int64(i), e.Seq, "seq contiguous from 0")
		out = append(out, e.Type+":"+string(e.Data))
	}
	return out
}

func createInspectList(t *testing.T, open func() session.Fenced) {
	s := open()
	seed := []session.Event{Note(0, "seed")}
	require.NoError(t, s.Create(ctx, Header("p", ""), seed))
	require.NoError(t, s.Create(ctx, Header("c", "p"), nil))
	require.NoError(t, s.Append(ctx, "p", []session.Event{Note(1, "one"), Note(2, "two")}))
	log, err := s.Inspect(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, Header("p", ""), log.Header)
	require.Equal(t, []string{`feedback/record:{"text":"seed"}`, `feedback/record:{"text":"one"}`, `feedback/record:{"text":"two"}`}, types(t, s, "p"))
	headers, err := open().List(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []session.Header{Header("p", ""), Header("c", "p")}, headers)
	flushed, err := s.Flush(ctx, "p")
	require.NoError(t, err)
	require.True(t, flushed)
}

func refusals(t *testing.T, open func() session.Fenced) {
	s := open()
	require.NoError(t, s.Create(ctx, Header("r", ""), nil))
	require.ErrorIs(t, s.Create(ctx, Header("r", ""), nil), session.ErrExists)
	require.ErrorIs(t, open().Create(ctx, Header("r", ""), nil), session.ErrExists, "another handle too")
	_, err := s.Inspect(ctx, "missing")
	require.ErrorIs(t, err, session.ErrNotFound)
	_, err = s.Acquire(ctx, "missing")
	require.ErrorIs(t, err, session.ErrNotFound)
	require.ErrorIs(t, s.Append(ctx, "r", []session.Event{Note(3, "gap")}), session.ErrSeqMismatch)
	require.ErrorIs(t, s.Create(ctx, session.Header{ID: "bad", Cwd: "relative"}, nil), session.ErrInvalid)
	require.Equal(t, []string(nil), types(t, s, "r"), "a refused append wrote nothing")
}

func staleEpoch(t *testing.T, open func() session.Fenced) {
	s := open()
	require.NoError(t, s.Create(ctx, Header("f", ""), nil))
	first, err := s.Acquire(ctx, "f")
	require.NoError(t, err)
	require.NoError(t, s.AppendFenced(ctx, "f", first, []session.Event{Note(0, "first")}))
	_, err = s.Acquire(ctx, "f")
	require.ErrorIs(t, err, fault.LeaseHeld, "held by the same handle")
	require.NoError(t, s.Release(ctx, "f", first))
	err = s.AppendFenced(ctx, "f", first, []session.Event{Note(1, "released")})
	require.ErrorIs(t, err, fault.Fenced)
	require.Equal(t, fault.Fenced, fault.CodeOf(err))

	second, err := s.Acquire(ctx, "f")
	require.NoError(t, err)
	require.Greater(t, second, first)
	require.ErrorIs(t, s.AppendFenced(ctx, "f", first, []session.Event{Note(1, "stale")}), fault.Fenced)
	require.NoError(t, s.AppendFenced(ctx, "f", second, []session.Event{Note(1, "second")}))
	require.Equal(t, []string{`feedback/record:{"text":"first"}`, `feedback/record:{"text":"second"}`}, types(t, s, "f"))
	require.NoError(t, s.Release(ctx, "f", first), "releasing a stale epoch is a no-op")
	require.NoError(t, s.Release(ctx, "f", second))
}

func takeoverAfterRelease(t *testing.T, open func() session.Fenced) {
	a, b := open(), open()
	require.NoError(t, a.Create(ctx, Header("t", ""), nil))
	ea, err := a.Acquire(ctx, "t")
	require.NoError(t, err)
	_, err = b.Acquire(ctx, "t")
	require.ErrorIs(t, err, fault.LeaseHeld, "another handle is refused while the lease is live")
	require.NoError(t, a.AppendFenced(ctx, "t", ea, []session.Event{Note(0, "a")}))
	require.NoError(t, a.Release(ctx, "t", ea))

	eb, err := b.Acquire(ctx, "t")
	require.NoError(t, err)
	require.NoError(t, b.AppendFenced(ctx, "t", eb, []session.Event{Note(1, "b")}))
	require.ErrorIs(t, a.AppendFenced(ctx, "t", ea, []session.Event{Note(2, "stale a")}), fault.Fenced)
	_, err = a.Acquire(ctx, "t")
	require.ErrorIs(t, err, fault.LeaseHeld)
	require.Equal(t, []string{`feedback/record:{"text":"a"}`, `feedback/record:{"text":"b"}`}, types(t, a, "t"))
	lost, err := b.Renew(ctx)
	require.NoError(t, err)
	require.Empty(t, lost)
	require.NoError(t, b.Release(ctx, "t", eb))
}

// concurrentWriters races appends from the holder and from a handle
// without the lease: the holder's land in seq order, the others are
// fenced, and the log stays contiguous.
func concurrentWriters(t *testing.T, open func() session.Fenced) {
	holder, other := open(), open()
	require.NoError(t, holder.Create(ctx, Header("w", ""), nil))
	epoch, err := holder.Acquire(ctx, "w")
	require.NoError(t, err)
	const n = 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := int64(0)
	fenced := make(chan error, n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			mu.Lock() // one writer per log: the holder's appends are serialized
			defer mu.Unlock()
			require.NoError(t, holder.AppendFenced(ctx, "w", epoch, []session.Event{Note(next, fmt.Sprint(i))}))
			next++
		}()
		go func() {
			defer wg.Done()
			fenced <- other.AppendFenced(ctx, "w", epoch+100, []session.Event{Note(0, "intruder")})
		}()
	}
	wg.Wait()
	close(fenced)
	for err := range fenced {
		require.ErrorIs(t, err, fault.Fenced)
	}
	require.Len(t, types(t, other, "w"), n)
	require.NoError(t, holder.Release(ctx, "w", epoch))
}

// interruptedTurn stores a turn its writer never closed: Load appends the
// closers (turn/end interrupted), once.
func interruptedTurn(t *testing.T, open func() session.Fenced) {
	s := open()
	require.NoError(t, s.Create(ctx, Header("i", ""), nil))
	require.NoError(t, s.Append(ctx, "i", []session.Event{
		{Type: vocab.TypeTurnStart, Seq: 0, Time: 100, Data: json.RawMessage(`{"turn":1}`)},
		{Type: vocab.TypeStepStart, Seq: 1, Time: 101, Data: json.RawMessage(`{"turn":1,"step":1}`)},
	}))
	log, err := open().Load(ctx, "i")
	require.NoError(t, err)
	require.Len(t, log.Events, 4)
	require.Equal(t, []string{
		vocab.TypeTurnStart + `:{"turn":1}`, vocab.TypeStepStart + `:{"turn":1,"step":1}`,
		vocab.TypeStepEnd + `:{"turn":1,"step":1}`, vocab.TypeTurnEnd + `:{"turn":1,"reason":{"kind":"interrupted"}}`,
	}, types(t, s, "i"))
	again, err := s.Load(ctx, "i")
	require.NoError(t, err)
	require.Len(t, again.Events, 4, "a closed turn gets no second closers")
}

// registryLease: a live session holds its lease, so another handle's
// registry cannot resume it until the first releases it.
func registryLease(t *testing.T, open func() session.Fenced) {
	a, b := session.NewSessions(open()), session.NewSessions(open())
	l, err := a.Create(ctx, Header("live", ""), nil)
	require.NoError(t, err)
	_, err = l.AppendThrough("feedback/record", json.RawMessage(`{"text":"by a"}`))
	require.NoError(t, err)
	_, err = b.Resume(ctx, "live")
	require.ErrorIs(t, err, fault.LeaseHeld)
	require.NoError(t, a.Release(ctx, l))

	resumed, err := b.Resume(ctx, "live")
	require.NoError(t, err)
	require.Equal(t, 1, resumed.Len()-1, "the event a wrote, then the end-seed marker")
	_, err = resumed.AppendThrough("feedback/record", json.RawMessage(`{"text":"by b"}`))
	require.NoError(t, err)
	require.NoError(t, b.Release(ctx, resumed))
	require.Len(t, types(t, b.Store(), "live"), 3)
}

// childFirstRelease: a family's leases are released in any order, by
// whichever handle (process) holds each: a parent released before its
// child (the Postgres store then keeps it from being marked disposed) and
// both released child-first after. Neither release loses a written event
// or keeps a session from being resumed: the parent first, then the
// child under its live parent.
func childFirstRelease(t *testing.T, open func() session.Fenced) {
	a, b := open(), open()
	require.NoError(t, a.Create(ctx, Header("fam", ""), nil))
	require.NoError(t, a.Create(ctx, Header("kid", "fam"), nil))
	acquire := func(s session.Fenced, id, text string) session.Epoch { // as the registry resumes: Acquire, then Load
		t.Helper()
		epoch, err := s.Acquire(ctx, id)
		require.NoError(t, err)
		log, err := s.Load(ctx, id)
		require.NoError(t, err)
		require.NoError(t, s.AppendFenced(ctx, id, epoch, []session.Event{Note(int64(len(log.Events)), text)}))
		return epoch
	}
	parent, child := acquire(a, "fam", "p1"), acquire(b, "kid", "c1")
	require.NoError(t, a.Release(ctx, "fam", parent), "a parent released before its child")
	require.NoError(t, b.Release(ctx, "kid", child))

	parent, child = acquire(b, "fam", "p2"), acquire(a, "kid", "c2")
	require.NoError(t, a.Release(ctx, "kid", child), "child first")
	require.NoError(t, b.Release(ctx, "fam", parent))

	parent, child = acquire(a, "fam", "p3"), acquire(a, "kid", "c3")
	require.NoError(t, a.Release(ctx, "kid", child))
	require.NoError(t, a.Release(ctx, "fam", parent))
	require.Equal(t, []string{`feedback/record:{"text":"p1"}`, `feedback/record:{"text":"p2"}`, `feedback/record:{"text":"p3"}`}, types(t, b, "fam"))
	require.Equal(t, []string{`feedback/record:{"text":"c1"}`, `feedback/record:{"text":"c2"}`, `feedback/record:{"text":"c3"}`}, types(t, b, "kid"))
}
