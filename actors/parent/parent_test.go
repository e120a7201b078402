package parent

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var bg = context.Background()

// newRegistry returns a registry over sessions; it is closed (every agent
// disposed) and its actor system shut down when the test ends.
func newRegistry(t *testing.T, sessions *session.Sessions, options ...func(*Config)) *Registry {
	t.Helper()
	system := actorkit.NewSystem(nil)
	cfg := Config{Sessions: sessions, Actors: actorkit.Host{System: system}}
	for _, option := range options {
		option(&cfg)
	}
	r := New(cfg)
	t.Cleanup(func() {
		require.NoError(t, r.Close(bg))
		system.Shutdown()
	})
	return r
}

func memory(t *testing.T) *Registry { return newRegistry(t, session.NewSessions(nil)) }

func create(t *testing.T, r *Registry, id, parentID string) *Handle {
	t.Helper()
	h, err := r.Create(bg, CreateSpec{Header: session.Header{ID: id, ParentSession: parentID}})
	require.NoError(t, err)
	return h
}

// record subscribes to the bus and returns the events seen so far.
func record(r *Registry) func() []string {
	var mu sync.Mutex
	var seen []string
	r.Subscribe(func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, strings.TrimSpace(string(e.Type)+" "+e.AgentID+" "+e.MessageID+string(e.Status)))
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

func TestCreatePublishesTheExactAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := memory(t)
		seen := record(r)
		h := create(t, r, "a", "")
		require.Same(t, h, r.Get("a"))
		require.True(t, r.IsLive(h))
		require.Equal(t, "a", h.Session().Header().ID)
		require.Positive(t, h.Header().CreatedAt)
		require.Equal(t, []*Handle{h}, r.List())
		require.Equal(t, []string{"agent/created a"}, seen())

		anonymous, err := r.Create(bg, CreateSpec{})
		require.NoError(t, err)
		require.Len(t, anonymous.ID(), 36, "an empty id gets a uuid")
		require.Greater(t, anonymous.Incarnation(), h.Incarnation())
	})
}

func TestEnqueueEventCarriesTheAcceptedMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := memory(t)
		var mu sync.Mutex
		carried := map[inbox.EventKind][]event.UserMessage{}
		r.Subscribe(func(e Event) {
			mu.Lock()
			defer mu.Unlock()
			carried[e.Type] = append(carried[e.Type], e.Message)
		})
		h := create(t, r, "a", "")
		id, err := h.Followup(bg, event.Text("hi"), event.Source{Kind: "user"})
		require.NoError(t, err)
		require.NoError(t, h.Activation().WhenIdle(bg))
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, carried[inbox.Enqueue], 1)
		require.Equal(t, event.UserMessage{ID: id, Role: "user", Content: event.Text("hi"), Source: event.Source{Kind: "user"}}, carried[inbox.Enqueue][0])
		require.Equal(t, []event.UserMessage{{}}, carried[inbox.Dequeue], "only the enqueue carries it")
	})
}

func TestCreatedIsDeliveredAfterPublicationBeforeCreateReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := memory(t)
		var live *Handle
		r.Subscribe(func(e Event) {
			if e.Type == EventCreated {
				live = r.Get(e.AgentID)
			}
		})
		h := create(t, r, "a", "")
		require.Same(t, h, live, "the listener saw the published agent before Create returned")
	})
}

func TestIDCollisionIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := memory(t)
		h := create(t, r, "a", "")
		_, err := r.Create(bg, CreateSpec{Header: session.Header{ID: "a"}})
		require.ErrorIs(t, err, fault.AgentExists)
		require.ErrorContains(t, err, `actors: agent "a" already exists`)
		require.Same(t, h, r.Get("a"), "the live agent is untouched")
	})
}

func TestStaleHandleAfterReRegistration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := memory(t)
		old := create(t, r, "a", "")
		require.NoError(t, old.Dispose(bg))
		require.Nil(t, r.Get("a"))
		fresh := create(t, r, "a", "")

		require.NotSame(t, old, fresh)
		require.Same(t, fresh, r.Get("a"))
		require.False(t, r.IsLive(old))
		require.True(t, r.IsLive(fresh))
		_, err := r.exact("a", old.Incarnation())
		require.ErrorIs(t, err, fault.StaleHandle)
		got, err := r.exact("a", fresh.Incarnation())
		require.NoError(t, err)
		require.Same(t, fresh, got)
		_, err = old.Followup(bg, event.Text("reply x"), event.Source{Kind: "user"})
		require.ErrorIs(t, err, fault.InboxClosed, "a stale handle cannot deliver to the new agent")
		require.NoError(t, old.Dispose(bg), "disposing the stale handle again is a no-op")
		require.Same(t, fresh, r.Get("a"), "and leaves the new agent alone")
		_, err = r.exact("b", 1)
		require.ErrorIs(t, err, fault.AgentNotFound)
	})
}

func TestCreateFailureRollsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sessions := session.NewSessions(nil)
		r := newRegistry(t, sessions)
		seen := record(r)
		_, err := r.Create(bg, CreateSpec{Header: session.Header{ID: "a", Cwd: "relative"}})
		require.ErrorIs(t, err, fault.AgentStartFailed)
		require.Nil(t, r.Get("a"))
		require.Nil(t, sessions.Get("a"))
		require.Empty(t, seen())
		create(t, r, "a", "") // the id is free again
	})
}

func TestPublicationFailureRollsBackTheSpawnedAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sessions := session.NewSessions(nil)
		var r *Registry
		r = newRegistry(t, sessions, func(c *Config) {
			c.NewAgent = func(o agent.Options) agent.Agent {
				r.mu.Lock()
				r.closed = true // the registry closes while the agent is being built
				r.mu.Unlock()
				return agent.Scripted(o)
			}
		})
		seen := record(r)
		_, err := r.Create(bg, CreateSpec{Header: session.Header{ID: "a"}})
		require.ErrorIs(t, err, fault.RegistryClosed)
		require.Nil(t, r.Get("a"))
		require.Nil(t, sessions.Get("a"), "the session left the live set")
		require.Empty(t, seen())
		require.Zero(t, len(r.List()))
	})
}

func TestLiveLineage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := memory(t)
		a := create(t, r, "a", "")
		b := create(t, r, "b", "a")
		c := create(t, r, "c", "b")
		require.Equal(t, []*Handle{c, b, a}, r.LiveLineage(c))
		require.NoError(t, b.Dispose(bg))
		require.Equal(t, []*Handle{c}, r.LiveLineage(c), "the walk stops at the first id that is not live")
		require.Equal(t, []*Handle{b, a}, r.LiveLineage(b), "a stale handle still heads its lineage")

		x := create(t, r, "x", "y")
		y := create(t, r, "y", "x")
		require.Equal(t, []*Handle{x, y}, r.LiveLineage(x), "a cycle ends at the repeated id")
	})
}

func TestCloseDisposesChildFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := memory(t)
		seen := record(r)
		create(t, r, "root", "")
		create(t, r, "child", "root")
		create(t, r, "grandchild", "child")
		create(t, r, "other", "")
		require.NoError(t, r.Close(bg))
		var disposed []string
		for _, e := range seen() {
			if id, ok := strings.CutPrefix(e, "agent/disposed "); ok {
				disposed = append(disposed, id)
			}
		}
		require.Len(t, disposed, 4)
		require.Less(t, indexOf(disposed, "grandchild"), indexOf(disposed, "child"))
		require.Less(t, indexOf(disposed, "child"), indexOf(disposed, "root"))
		require.Zero(t, len(r.List()))
		_, err := r.Create(bg, CreateSpec{Header: session.Header{ID: "late"}})
		require.ErrorIs(t, err, fault.RegistryClosed)
	})
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func TestBusCarriesInboxAndStatusEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := memory(t)
		h := create(t, r, "a", "")
		seen := record(r)
		id, err := h.Followup(bg, event.Text("reply hi"), event.Source{Kind: "user"})
		require.NoError(t, err)
		require.NoError(t, h.Activation().WhenIdle(bg))
		require.NoError(t, h.Dispose(bg)) // every event is out when it returns (inbox.Emit)
		require.Equal(t, []string{
			"agent/inbox/enqueue a " + id, "agent/status a running", "agent/inbox/dequeue a " + id,
			"agent/status a idle", "agent/disposed a",
		}, seen())
	})
}

func TestAHandlesOwnObserverSeesOnlyItsAgentBeforeTheBus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		r := newRegistry(t, session.NewSessions(nil), func(c *Config) {
			c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		})
		a, b := create(t, r, "a", ""), create(t, r, "b", "")
		var mu sync.Mutex
		var order []string
		note := func(s string) {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, s)
		}
		r.Subscribe(func(e Event) { note("bus " + string(e.Type) + " " + e.AgentID) })
		a.Observe(func(e Event) { note("own " + string(e.Type) + " " + e.AgentID) })
		b.Observe(func(Event) { panic("observer bug") })

		_, err := a.Followup(bg, event.Text("reply hi"), event.Source{Kind: "user"})
		require.NoError(t, err)
		require.NoError(t, a.Activation().WhenIdle(bg))
		synctest.Wait() // the idle status is delivered (WhenIdle may return first)
		a.Observe(func(e Event) { note("replaced " + string(e.Type) + " " + e.AgentID) })
		require.NoError(t, a.Dispose(bg))
		b.Observe(nil)
		require.NoError(t, b.Dispose(bg))

		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{
			"own agent/inbox/enqueue a", "bus agent/inbox/enqueue a",
			"own agent/status a", "bus agent/status a",
			"own agent/inbox/dequeue a", "bus agent/inbox/dequeue a",
			"own agent/status a", "bus agent/status a",
			"replaced agent/disposed a", "bus agent/disposed a",
			"bus agent/disposed b",
		}, order)
		require.NotContains(t, logs.String(), "observer bug", "b's observer was removed before b had an event")
	})
}

func TestAPanickingOwnObserverDoesNotStopTheBus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		r := newRegistry(t, session.NewSessions(nil), func(c *Config) {
			c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		})
		h := create(t, r, "a", "")
		seen := record(r)
		h.Observe(func(Event) { panic("observer bug") })
		require.NoError(t, h.Dispose(bg))
		require.Equal(t, []string{"agent/disposed a"}, seen())
		require.Contains(t, logs.String(), "event listener panicked")
		require.Contains(t, logs.String(), "observer bug")
	})
}

func TestAPanickingListenerDoesNotStopItsPeers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		r := newRegistry(t, session.NewSessions(nil), func(c *Config) {
			c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		})
		r.Subscribe(func(Event) { panic("listener bug") })
		seen := record(r)
		cancel := r.Subscribe(func(Event) { t.Fatal("cancelled listener called") })
		cancel()
		cancel()
		create(t, r, "a", "")
		require.Equal(t, []string{"agent/created a"}, seen())
		require.Contains(t, logs.String(), "event listener panicked")
	})
}

func TestSubagentsCapabilityIsBoundToTheCallingAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := memory(t)
		bound := make(chan *Handle, 1)
		r.SetSubagents(func(self *Handle) agent.Subagents {
			bound <- self
			return nil
		})
		h := create(t, r, "a", "")
		_, err := h.Followup(bg, event.Text("spawn x: y"), event.Source{Kind: "user"})
		require.NoError(t, err)
		require.NoError(t, h.Activation().WhenIdle(bg))
		require.Same(t, h, <-bound)
	})
}

// crashedLog writes a log whose last turn is open and whose last line is
// torn, as a crash in the middle of a write leaves it.
func crashedLog(t *testing.T, store *session.JSONL, root string) {
	t.Helper()
	require.NoError(t, store.Create(bg, session.Header{ID: "crashed", CreatedAt: 1}, nil))
	require.NoError(t, store.Append(bg, "crashed", []session.Event{
		{Type: "user/message", Seq: 0, Time: 1, Data: []byte(`{"content":[],"source":{"kind":"user"},"role":"user","id":"m1"}`), SurfaceOp: []byte(`"append"`)},
		{Type: "turn/start", Seq: 1, Time: 1, Data: []byte(`{"turn":1}`)},
		{Type: "step/start", Seq: 2, Time: 1, Data: []byte(`{"turn":1,"step":1}`)},
	}))
	path, err := logpath.Path(root, "", "crashed")
	require.NoError(t, err)
	torn, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = torn.WriteString(`{"type":"assistant/message","seq":3,"ti`)
	require.NoError(t, err)
	require.NoError(t, torn.Close())
}

func TestResumeAfterACrashTruncatedLog(t *testing.T) {
	root := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		store, err := session.OpenJSONL(root)
		require.NoError(t, err)
		crashedLog(t, store, root)
		r := newRegistry(t, session.NewSessions(store))
		h, err := r.Resume(bg, "crashed", Spec{})
		require.NoError(t, err)
		_, err = h.Followup(bg, event.Text("reply back"), event.Source{Kind: "user"})
		require.NoError(t, err)
		require.NoError(t, h.Activation().WhenIdle(bg))
		require.NoError(t, h.Dispose(bg))

		log, err := store.Inspect(bg, "crashed")
		require.NoError(t, err)
		require.NoError(t, store.Close())
		var got []string
		for _, e := range log.Events {
			got = append(got, e.Type+" "+string(e.Data))
		}
		require.Len(t, got, 12)
		require.True(t, strings.HasPrefix(got[7], "user/message "))
		require.True(t, strings.HasPrefix(got[9], "assistant/message "))
		require.Equal(t, []string{
			`user/message {"content":[],"source":{"kind":"user"},"role":"user","id":"m1"}`,
			`turn/start {"turn":1}`,
			`step/start {"turn":1,"step":1}`,
			`step/end {"turn":1,"step":1}`,
			`turn/end {"turn":1,"reason":{"kind":"interrupted"}}`,
			`session/end-seed {}`,
			`turn/start {"turn":2,"trigger":{"kind":"message","source":{"kind":"user"}}}`,
			got[7],
			`step/start {"turn":2,"step":1}`,
			got[9],
			`step/end {"turn":2,"step":1}`,
			`turn/end {"turn":2,"reason":{"kind":"completed"}}`,
		}, got, "the torn tail is gone, the open turn closed as interrupted, and turns count on")
	})
}

func TestResumeOfAMissingSessionFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := memory(t)
		_, err := r.Resume(bg, "nowhere", Spec{})
		require.ErrorIs(t, err, fault.AgentStartFailed)
		require.ErrorIs(t, err, session.ErrNotFound)
		require.Nil(t, r.Get("nowhere"))
	})
}

func TestAListenerMayDisposeTheAgentItIsToldAbout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := memory(t)
		seen := record(r)
		r.Subscribe(func(e Event) {
			if e.Type == EventCreated {
				require.NoError(t, r.Get(e.AgentID).Dispose(bg))
			}
		})
		h := create(t, r, "a", "")
		require.False(t, r.IsLive(h))
		require.Equal(t, []string{"agent/created a", "agent/disposed a"}, seen(), "disposed still comes after created")
	})
}

// A Dispose made by a listener on the turn goroutine's idle status races
// a Dispose from elsewhere: the outer one waits for that goroutine to
// deliver agent/disposed, and the listener's returns at once (it runs
// inside a delivery), so neither waits for the other.
func TestAListenerDisposeRacingAnotherDisposeCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := memory(t)
		h := create(t, r, "a", "")
		seen := record(r)
		inner := make(chan error, 1)
		r.Subscribe(func(e Event) {
			if e.Type == inbox.StatusChange && e.Status == inbox.Idle {
				inner <- h.Dispose(bg)
			}
		})
		_, err := h.Followup(bg, event.Text("sleep 1h"), event.Source{Kind: "user"})
		require.NoError(t, err)
		synctest.Wait() // the turn sleeps
		require.Empty(t, inner, "not idle before the outer Dispose")
		require.NoError(t, h.Dispose(bg))
		require.NoError(t, <-inner)
		events := seen()
		require.Equal(t, "agent/disposed a", events[len(events)-1], "agent/disposed is out when Dispose returns, last")
	})
}

func TestHandleDisposeIsBoundedByItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		stuck := agent.Func(func(context.Context, agent.Host, event.UserMessage) (agent.StopReason, error) {
			<-release // ignores cancellation
			return agent.Completed, nil
		})
		r := memory(t)
		h, err := r.Create(bg, CreateSpec{Header: session.Header{ID: "a"}, Spec: Spec{Agent: stuck}})
		require.NoError(t, err)
		_, err = h.Followup(bg, event.Text("x"), event.Source{Kind: "user"})
		require.NoError(t, err)
		synctest.Wait() // the turn has started
		ctx, cancel := context.WithTimeout(bg, time.Minute)
		defer cancel()
		require.ErrorIs(t, h.Dispose(ctx), context.DeadlineExceeded)
		require.True(t, r.IsLive(h), "still registered until the disposal completes")
		close(release)
		require.NoError(t, h.Dispose(bg))
		require.False(t, r.IsLive(h))
		<-h.Disposed()
	})
}

// heldDispatcher runs mailboxes on new goroutines, except while held: then
// it keeps the runs until release starts them.
type heldDispatcher struct {
	mu   sync.Mutex
	hold bool
	kept []func()
}

func (d *heldDispatcher) Schedule(fn func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.hold {
		d.kept = append(d.kept, fn)
		return
	}
	go fn()
}

func (d *heldDispatcher) Throughput() int { return 300 }

func (d *heldDispatcher) setHold() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hold = true
}

func (d *heldDispatcher) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hold = false
	for _, fn := range d.kept {
		go fn()
	}
	d.kept = nil
}

// A Dispose that discards a message nobody claimed yet makes the agent
// idle itself, so it delivers agent/status idle on its own goroutine while
// it holds the agent's disposal. A listener that disposes the agent it is
// told about must then not wait for that disposal (its own caller), or
// neither ever returns.
func TestAListenerDisposeInsideTheOuterDisposesOwnDeliveryReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &heldDispatcher{}
		r := newRegistry(t, session.NewSessions(nil), func(c *Config) { c.Actors.Dispatcher = d })
		h := create(t, r, "a", "")
		synctest.Wait() // the actor has started
		listenerCalled := make(chan struct{})
		inner := make(chan error, 1)
		r.Subscribe(func(e Event) {
			if e.Type == inbox.StatusChange && e.Status == inbox.Idle {
				close(listenerCalled)
				inner <- h.Dispose(bg)
			}
		})
		d.setHold() // the message below stays unclaimed
		_, err := h.Followup(bg, event.Text("sleep 1h"), event.Source{Kind: "user"})
		require.NoError(t, err)

		outer := make(chan error, 1)
		go func() { outer <- h.Dispose(bg) }()
		<-listenerCalled // inside the outer Dispose, on its goroutine
		d.release()
		require.NoError(t, <-outer)
		require.NoError(t, <-inner)
		require.True(t, testkit.Closed(h.Disposed()))
	})
}

func TestHoldsOwnDescriptorLooksPastTheSeedOnly(t *testing.T) {
	r := memory(t)
	at := func(typ string, seq int64) session.Event {
		return session.Event{Type: typ, Seq: seq, Data: json.RawMessage(`{}`)}
	}
	descriptor, plain := vocab.TypeSubagentDescriptor, "user/message"
	one := 1
	cases := []struct {
		id     string
		header session.Header
		seed   []session.Event
		want   bool
	}{
		{"own", session.Header{ID: "own"}, []session.Event{at(descriptor, 0)}, true},
		{"plain", session.Header{ID: "plain"}, []session.Event{at(plain, 0)}, false},
		{"inherited", session.Header{ID: "inherited", SeedLength: &one}, []session.Event{at(descriptor, 0), at(plain, 1)}, false},
		{"after-seed", session.Header{ID: "after-seed", SeedLength: &one}, []session.Event{at(plain, 0), at(descriptor, 1)}, true},
	}
	for _, c := range cases {
		h, err := r.Create(bg, CreateSpec{Header: c.header, Seed: c.seed})
		require.NoError(t, err, c.id)
		require.Equal(t, c.want, h.Session().HoldsOwnDescriptor(), c.id)
		require.Equal(t, c.want, h.Session().HoldsOwnDescriptor(), "%s asked again", c.id)
	}
}

func TestHoldsOwnDescriptorSeesADescriptorAppendedAfterAScan(t *testing.T) {
	r := memory(t)
	h := create(t, r, "late", "")
	require.False(t, h.Session().HoldsOwnDescriptor())
	for range 3 {
		_, err := h.Session().Append("user/message", map[string]string{})
		require.NoError(t, err)
		require.False(t, h.Session().HoldsOwnDescriptor(), "plain events appended since the last scan")
	}
	_, err := h.Session().Append(vocab.TypeSubagentDescriptor, map[string]string{})
	require.NoError(t, err)
	require.True(t, h.Session().HoldsOwnDescriptor(), "the events appended since the last scan are read")
}

// An agent whose actor stopped between its spawn and its publication (its
// parent's actor stopping it, say) released itself unpublished: publishing
// it then fails by code and leaves the registry without it, so no entry
// outlives its actor.
func TestAnAgentStoppedBeforeItsPublicationIsNeverPublished(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sessions := session.NewSessions(nil)
		r := newRegistry(t, sessions)
		seen := record(r)
		live, err := sessions.Create(bg, session.Header{ID: "a"}, nil)
		require.NoError(t, err)
		h, err := r.spawn(live, Spec{}, false)
		require.NoError(t, err)
		require.NoError(t, h.act.Dispose(bg), "the actor stops before publication")
		require.ErrorIs(t, r.publish(h), fault.ActivationClosing)
		require.Nil(t, r.Get("a"), "the stopped agent is not live")
		require.Nil(t, sessions.Get("a"), "its session was released")
		require.Empty(t, seen())
		create(t, r, "a", "") // the id is free again
	})
}

func TestAHandleReleasedByItsStopAloneReportsDisposeDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := memory(t)
		seen := record(r)
		h := create(t, r, "a", "")
		h.Activation().Stop(agent.CancelCause{Kind: agent.CauseDisposed})
		<-h.Activation().Done()
		select {
		case <-h.Disposed():
		default:
			t.Fatal("Disposed is not closed once the stop released the handle")
		}
		require.NoError(t, h.Dispose(bg), "Dispose after the release returns its result")
		require.NoError(t, h.Dispose(bg), "and again")
		require.False(t, r.IsLive(h))
		require.Contains(t, seen(), "agent/disposed a")
	})
}
