package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

var userSource = event.Source{Kind: "user"}

// openRuntime opens a runtime over a JSONL store of plain logs at root
// and its backend; both are closed at the test's end.
func openRuntime(t *testing.T, root string) (*dsh.Runtime, *runtimeBackend) {
	t.Helper()
	opened, err := dsh.Open(dsh.Options{Dir: root, Compression: "none"}) // the tests touch the plain log files
	require.NoError(t, err)
	b := newRuntimeBackend(opened)
	t.Cleanup(func() {
		b.close()
		require.NoError(t, opened.Close())
	})
	return opened, b
}

func TestRuntimeBackendListsStoredAndLiveSessionsWithoutActivating(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	rt, _ := openRuntime(t, root)
	started(t, rt, "stored")
	converse(t, rt, "stored", "reply first line\nreply second")
	require.NoError(t, rt.Close())

	// A cold session's updatedAt is its log file's mtimeMs, as Node's
	// fs.stat computes it (sec·1e3 + nsec/1e6).
	mtime := time.Unix(1764522000, 123456789)
	logPath, err := logpath.Path(root, "", "stored")
	require.NoError(t, err)
	require.NoError(t, os.Chtimes(logPath, mtime, mtime))

	rt, b := openRuntime(t, root)
	w := filepath.Join(root, "w")
	require.NoError(t, rt.OpenSession(ctx, dsh.SessionSpec{ID: "live", Cwd: w}))
	created, err := rt.History(ctx, "live")
	require.NoError(t, err)
	createdAt := created.Header.CreatedAt

	summaries, err := b.ListSessions(ctx)
	require.NoError(t, err)
	require.Len(t, summaries, 2)
	require.Equal(t, sessionSummary{ID: "live", CreatedAt: createdAt, UpdatedAt: float64(createdAt), Live: true, Cwd: w}, summaries[0])
	require.Equal(t, "stored", summaries[1].ID)
	require.False(t, summaries[1].Live)
	require.Equal(t, "reply first line", summaries[1].Title)
	require.Equal(t, 1764522000*1e3+123456789/1e6, summaries[1].UpdatedAt)
	require.False(t, isLive(rt, "stored"), "listing never resumes a stored session")

	converse(t, rt, "live", "reply hello")
	summaries, err = b.ListSessions(ctx)
	require.NoError(t, err)
	require.Equal(t, "reply hello", summaries[0].Title, "facts follow live appends")
	live, err := rt.History(ctx, "live")
	require.NoError(t, err)
	events := live.Events
	require.Equal(t, float64(events[len(events)-1].Time), summaries[0].UpdatedAt, "a live session's is its last event's time")

	transcript, err := b.ReadSession(ctx, "stored")
	require.NoError(t, err)
	require.NotEmpty(t, transcript.Events)
	require.False(t, isLive(rt, "stored"), "reading never resumes a stored session")
	_, err = b.ReadSession(ctx, "ghost")
	require.ErrorIs(t, err, codeSessionNotFound)

	// Picking a session up is not activity: a resumed session's end-seed
	// does not move its updatedAt (the original's lastActivityTime).
	_, err = rt.ResumeAgent(ctx, "stored")
	require.NoError(t, err)
	resumed, err := rt.History(ctx, "stored")
	require.NoError(t, err)
	events = resumed.Events
	require.Equal(t, "session/end-seed", events[len(events)-1].Type)
	summaries, err = b.ListSessions(ctx)
	require.NoError(t, err)
	require.Equal(t, "stored", summaries[1].ID, "live now, after live")
	require.Equal(t, float64(events[len(events)-2].Time), summaries[1].UpdatedAt)
}

// TestRuntimeBackendListsInTheOriginalsOrder: live sessions in the order
// they became live, then stored ones in the store's listing order (folder
// names, byte order), which session.list's stable sort by updatedAt keeps
// for ties — not creation order.
func TestRuntimeBackendListsInTheOriginalsOrder(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	rt, _ := openRuntime(t, root)
	for _, id := range []string{"b", "a", "d", "c"} {
		started(t, rt, id)
	}
	require.NoError(t, rt.Close())
	same := time.Unix(1764522000, 0)
	for _, id := range []string{"a", "b", "c", "d"} {
		path, err := logpath.Path(root, "", id)
		require.NoError(t, err)
		require.NoError(t, os.Chtimes(path, same, same))
	}

	rt, b := openRuntime(t, root)
	for _, id := range []string{"d", "c"} { // resumed out of creation order
		_, err := rt.ResumeAgent(ctx, id)
		require.NoError(t, err)
	}
	summaries, err := b.ListSessions(ctx)
	require.NoError(t, err)
	var ids []string
	for _, s := range summaries {
		ids = append(ids, s.ID)
	}
	require.Equal(t, []string{"d", "c", "a", "b"}, ids)
}

func TestRuntimeBackendPromptsTopLevelSessionsOnly(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	planted(t, root, "none", func(store *session.JSONL) {
		plant(t, store, session.Header{ID: "top"})
		plant(t, store, session.Header{ID: "kid", ParentSession: "top", Origin: "subagent"})
	})

	rt, b := openRuntime(t, root)
	id, err := b.PromptSession(ctx, "top", event.Text("reply resumed"), event.Source{Kind: "user", RPCID: "r1"})
	require.NoError(t, err)
	require.NotEmpty(t, id)
	require.True(t, isLive(rt, "top"), "an ordinary prompt resumes a stored top-level session")
	waitIdle(t, rt, "top", "reply resumed")

	_, err = b.PromptSession(ctx, "kid", event.Text("reply no"), userSource)
	require.ErrorIs(t, err, codeAgentBusy)
	require.False(t, isLive(rt, "kid"), "a child is never resumed by the ordinary route")
	_, err = b.PromptSession(ctx, "ghost", event.Text("reply no"), userSource)
	require.ErrorIs(t, err, codeSessionNotFound)

	created, err := b.CreateSession(ctx, createRequest{ID: "made", Cwd: filepath.Join(root, "w")})
	require.NoError(t, err)
	require.True(t, created.Live)
	require.True(t, isLive(rt, created.ID))
}

// A top-level session whose lease another process holds (it runs there)
// is not resumed here: session.prompt answers agent-busy naming why, not
// internal, and nothing is logged to the session.
func TestSessionPromptOfASessionLeasedElsewhereIsAgentBusy(t *testing.T) {
	root := t.TempDir()
	elsewhere, before := storedAndLeasedElsewhere(t, root)
	rt, b := openRuntime(t, root)
	got := rawCall(t, newTestHandler(t, b), "session.prompt", `{"sessionId":"top","mode":"queue","content":[]}`)
	requireBusyElsewhere(t, got, rt, elsewhere, before)
}

// storedAndLeasedElsewhere stores the top-level session "top" under root
// and leases it as another process would (see leaseElsewhere).
func storedAndLeasedElsewhere(t *testing.T, root string) (*session.JSONL, *session.Log) {
	t.Helper()
	rt, _ := openRuntime(t, root)
	started(t, rt, "top")
	require.NoError(t, rt.Close())
	return leaseElsewhere(t, root, "top")
}

// leaseElsewhere acquires id's lease through a second JSONL store on root,
// as another process would, and returns that store and id's log as it
// stood then.
func leaseElsewhere(t *testing.T, root, id string) (*session.JSONL, *session.Log) {
	t.Helper()
	elsewhere, err := session.OpenJSONL(root)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, elsewhere.Close()) })
	_, err = elsewhere.Acquire(context.Background(), id)
	require.NoError(t, err)
	before, err := elsewhere.Inspect(context.Background(), id)
	require.NoError(t, err)
	return elsewhere, before
}

// requireBusyElsewhere requires got to be agent-busy for "top", leased
// by elsewhere, with top not live in rt and its log as it was (before).
func requireBusyElsewhere(t *testing.T, got string, rt *dsh.Runtime, elsewhere *session.JSONL, before *session.Log) {
	t.Helper()
	require.Equal(t, `{"type":"server-response","rpcId":"r","result":{"ok":false,"error":{"code":"agent-busy",`+
		`"message":"session \"top\" is running in another process",`+
		`"details":{"reason":"its lease is held by another process; retry once that process releases it or the lease expires"}}}}`, got)
	require.False(t, isLive(rt, "top"))
	after, err := elsewhere.Inspect(context.Background(), "top")
	require.NoError(t, err)
	require.Equal(t, before.Events, after.Events)
}

// session.create of a stored top-level session whose lease another
// process holds (it runs there) answers agent-busy naming why, as
// session.prompt does, not internal; nothing is resumed or logged here.
func TestSessionCreateOfASessionLeasedElsewhereIsAgentBusy(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	w := filepath.Join(root, "w")
	rt, _ := openRuntime(t, root)
	require.NoError(t, rt.OpenSession(ctx, dsh.SessionSpec{ID: "top", Cwd: w}))
	require.NoError(t, rt.Close())
	elsewhere, before := leaseElsewhere(t, root, "top")

	rt, b := openRuntime(t, root)
	payload, err := json.Marshal(map[string]string{"sessionId": "top", "cwd": w})
	require.NoError(t, err)
	got := rawCall(t, newTestHandler(t, b), "session.create", string(payload))
	requireBusyElsewhere(t, got, rt, elsewhere, before)
}

// TestRuntimeBackendCreateSessionIsTheOriginalsEnsureSession: a session is
// created under the given id with its cwd (the directory made when
// missing); a requested id that is live or stored is adopted (resumed) when
// its cwd is the requested one, else a sessionConflict.
func TestRuntimeBackendCreateSessionIsTheOriginalsEnsureSession(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	rt, _ := openRuntime(t, root)
	a, b2 := filepath.Join(root, "a"), filepath.Join(root, "b", "deep")
	require.NoError(t, rt.OpenSession(ctx, dsh.SessionSpec{ID: "stored", Cwd: a}))
	started(t, rt, "no-cwd")
	require.NoError(t, rt.Close())

	rt, b := openRuntime(t, root)
	created, err := b.CreateSession(ctx, createRequest{ID: "fresh", Cwd: b2})
	require.NoError(t, err)
	require.Equal(t, "fresh", created.ID)
	require.Equal(t, b2, created.Cwd)
	fresh, err := rt.History(ctx, "fresh")
	require.NoError(t, err)
	require.Equal(t, b2, fresh.Header.Cwd)
	require.DirExists(t, b2)

	adopted, err := b.CreateSession(ctx, createRequest{ID: "fresh", Cwd: b2, Requested: true})
	require.NoError(t, err, "a live id is adopted")
	require.Equal(t, b2, adopted.Cwd)
	_, err = b.CreateSession(ctx, createRequest{ID: "fresh", Cwd: a, Requested: true})
	require.Equal(t, &sessionConflict{SessionID: "fresh", RequestedCwd: a, ExistingCwd: b2, HasExisting: true}, err,
		"the original's ensureSession checks the cwd of the agent it returns, a live one too")

	_, err = b.CreateSession(ctx, createRequest{ID: "stored", Cwd: b2, Requested: true})
	require.Equal(t, &sessionConflict{SessionID: "stored", RequestedCwd: b2, ExistingCwd: a, HasExisting: true}, err)
	require.False(t, isLive(rt, "stored"))
	_, err = b.CreateSession(ctx, createRequest{ID: "no-cwd", Cwd: b2, Requested: true})
	require.Equal(t, &sessionConflict{SessionID: "no-cwd", RequestedCwd: b2}, err)

	resumed, err := b.CreateSession(ctx, createRequest{ID: "stored", Cwd: a, Requested: true})
	require.NoError(t, err)
	require.True(t, resumed.Live)
	require.True(t, isLive(rt, "stored"), "a stored id with the same cwd is resumed")
}

// TestRuntimeBackendFencesSubagentSessionsFromGenericRoutes: explicit-id session.create and session.prompt answer
// agent-busy for a subagent session (origin "subagent", or a child
// whose own suffix holds its descriptor), live or cold, and for a live
// agent its exact live parent owns (a one-shot child), before any cwd
// conflict and without resuming it; session.cancel answers agent-busy for
// a live one and, as the original, not-attached for a cold one (no agent
// is attached to it here); a fork whose seed merely inherits an
// ancestor's descriptor is an ordinary session, and so is a child that was
// resumed by an ordinary route (no parent owns it).
func TestRuntimeBackendFencesSubagentSessionsFromGenericRoutes(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	a, elsewhere := filepath.Join(root, "a"), filepath.Join(root, "elsewhere")
	descriptorEvent := session.Event{Type: vocab.TypeSubagentDescriptor, Data: json.RawMessage(`{"version":1,"provider":"spawn","label":"x"}`)}
	one := 1
	planted(t, root, "none", func(store *session.JSONL) {
		plant(t, store, session.Header{ID: "top", Cwd: a})
		plant(t, store, session.Header{ID: "kid", Cwd: a, ParentSession: "top", Origin: "subagent"})
		plant(t, store, session.Header{ID: "seed-era", Cwd: a, ParentSession: "top"}, descriptorEvent)
		plant(t, store, session.Header{ID: "fork", Cwd: a, ParentSession: "top", SeedLength: &one}, descriptorEvent)
	})

	rt, b := openRuntime(t, root)
	oneShots := make(chan string, 8)
	defer rt.Subscribe(func(n dsh.Notice) {
		if n.Kind == dsh.SessionLive && n.ParentSessionID == "top" && n.SessionID != "fork" {
			select {
			case oneShots <- n.SessionID:
			default: // never: two children go live
			}
		}
	})()
	top, err := rt.ResumeAgent(ctx, "top")
	require.NoError(t, err)
	liveKid, err := rt.Spawn(ctx, top, "x", event.Text("sleep 1m"))
	require.NoError(t, err)
	require.Equal(t, liveKid, <-oneShots)
	delegated := make(chan error, 1)
	go func() {
		_, err := rt.Delegate(ctx, top, "spawn", event.Text("sleep 1m"))
		delegated <- err
	}()
	var oneShot string
	select {
	case oneShot = <-oneShots:
	case err := <-delegated:
		require.Failf(t, "the one-shot child ended", "before it was live: %v", err)
	case <-time.After(time.Minute):
		require.Fail(t, "waiting for the one-shot child to become live")
	}
	for _, id := range []string{liveKid, oneShot} { // its session goes live before its agent is published
		require.Eventually(t, func() bool { return isLive(rt, id) }, time.Minute, time.Millisecond, "waiting for %s's agent to be published", id)
	}
	for _, id := range []string{"kid", "seed-era", liveKid, oneShot} {
		for _, cwd := range []string{a, elsewhere} {
			_, err := b.CreateSession(ctx, createRequest{ID: id, Cwd: cwd, Requested: true})
			require.ErrorIs(t, err, codeAgentBusy, "create %s in %s", id, cwd)
		}
		_, err := b.PromptSession(ctx, id, event.Text("reply no"), userSource)
		require.ErrorIs(t, err, codeAgentBusy, "prompt %s", id)
		if id == "kid" || id == "seed-era" {
			require.ErrorIs(t, b.CancelSession(ctx, id), fault.AgentNotFound, "cancel %s", id)
		} else {
			require.ErrorIs(t, b.CancelSession(ctx, id), codeAgentBusy, "cancel %s", id)
		}
	}
	require.False(t, isLive(rt, "kid"), "a fenced child is never resumed")
	require.False(t, isLive(rt, "seed-era"), "a fenced child is never resumed")

	for range 2 { // cold, then live with its parent live
		_, err = b.PromptSession(ctx, "fork", event.Text("reply ordinary"), userSource)
		require.NoError(t, err, "an inherited ancestor descriptor does not classify")
		waitIdle(t, rt, "fork", "reply ordinary")
	}

	// A live owned child is fenced only while that exact parent is live.
	require.NoError(t, rt.Release(ctx, "top"))
	_, err = rt.ResumeAgent(ctx, "top")
	require.NoError(t, err)
	require.NoError(t, b.CancelSession(ctx, oneShot), "the parent that owned it is gone; its successor does not own it")
	waitIdle(t, rt, oneShot, "sleep 1m (cancelled)")
	// Its delegation ends with that turn and disposes it, which would
	// discard a prompt accepted first: wait for it, then the prompt
	// resumes the child by the ordinary route.
	select {
	case <-delegated:
	case <-time.After(time.Minute):
		require.Fail(t, "waiting for the cancelled one-shot child's delegation to end")
	}
	_, err = b.PromptSession(ctx, oneShot, event.Text("reply mine now"), userSource)
	require.NoError(t, err)
	waitIdle(t, rt, oneShot, "reply mine now")
}

// noticeLog records notices for one session: the session registry's
// (added, events, removed) and the agent bus's status edges apart, since
// the two sources are ordered each on its own.
type noticeLog struct {
	mu       sync.Mutex
	id       string
	notices  []string
	statuses []string
}

func (l *noticeLog) observe(n notice) {
	if n.SessionID != l.id {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch n.Kind {
	case sessionAdded:
		l.notices = append(l.notices, "added")
	case sessionStatus:
		if n.Running {
			l.statuses = append(l.statuses, "running")
		} else {
			l.statuses = append(l.statuses, "idle")
		}
	case sessionEvent:
		l.notices = append(l.notices, n.Event.Type)
	case sessionRemoved:
		l.notices = append(l.notices, "removed")
	}
}

func TestRuntimeBackendNoticesFollowTheAgentLifecycle(t *testing.T) {
	ctx := context.Background()
	rt, b := openRuntime(t, t.TempDir())
	log := &noticeLog{id: "a"}
	cancel := b.Subscribe(log.observe)
	defer cancel()

	started(t, rt, "a")
	converse(t, rt, "a", "reply hi")
	require.NoError(t, rt.Release(ctx, "a"))

	log.mu.Lock()
	defer log.mu.Unlock()
	require.Equal(t, []string{
		"added", "turn/start", "user/message", "step/start", "assistant/message", "step/end", "turn/end", "removed",
	}, log.notices)
	require.Equal(t, []string{"running", "idle"}, log.statuses)
}

// TestRuntimeBackendConcurrentCreatesOfOneIDAreEnsureSession: requests
// racing to create one new id, in two cwds, all answer as ensureSession
// does once one of them made it: the winner's cwd adopts it, the other is a
// sessionConflict. None fails because another was creating it meanwhile.
func TestRuntimeBackendConcurrentCreatesOfOneIDAreEnsureSession(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	_, b := openRuntime(t, root)
	cwds := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	const rounds, racers = 8, 8
	for round := range rounds {
		id := fmt.Sprintf("race-%d", round)
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = b.CreateSession(ctx, createRequest{ID: id, Cwd: cwds[i%2], Requested: true})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err == nil {
				continue
			}
			var conflict *sessionConflict
			require.ErrorAs(t, err, &conflict, "%s, racer %d: %v", id, i, err)
			require.Equal(t, cwds[i%2], conflict.RequestedCwd)
		}
	}
}
