package inbox

import (
	"sync"
	"testing"
	"testing/synctest"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/stretchr/testify/require"
)

// heldDispatcher records the mailbox runs it is asked to schedule and runs
// none of them until runAll.
type heldDispatcher struct {
	mu        sync.Mutex
	held      []func()
	schedules int
}

func (d *heldDispatcher) Schedule(fn func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.held = append(d.held, fn)
	d.schedules++
}

func (d *heldDispatcher) Throughput() int { return DefaultThroughput }

func (d *heldDispatcher) scheduled() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.schedules
}

// runAll runs the held mailbox runs on the calling goroutine.
func (d *heldDispatcher) runAll() {
	d.mu.Lock()
	held := d.held
	d.held = nil
	d.mu.Unlock()
	for _, fn := range held {
		fn()
	}
}

// goidRecorder is a recorder that also notes the goroutine of every
// invocation.
type goidRecorder struct {
	*recorder
	mu    sync.Mutex
	goids []uint64
}

func (g *goidRecorder) note() {
	g.mu.Lock()
	g.goids = append(g.goids, testkit.GoroutineID())
	g.mu.Unlock()
}

func (g *goidRecorder) InvokeSystemMessage(m any) { g.note(); g.recorder.InvokeSystemMessage(m) }
func (g *goidRecorder) InvokeUserMessage(m any)   { g.note(); g.recorder.InvokeUserMessage(m) }

func (g *goidRecorder) invokedOn() []uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]uint64(nil), g.goids...)
}

// newHeld returns an inbox whose mailbox runs are held by a heldDispatcher.
func newHeld() (*Inbox, *goidRecorder, *heldDispatcher) {
	r := &goidRecorder{recorder: &recorder{}}
	r.box = newInbox(r.observe)
	d := &heldDispatcher{}
	Mailbox(r.box).RegisterHandlers(r, d)
	return r.box, r, d
}

func TestRunHereProcessesOnTheCallingGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r, d := newHeld()
		b.RunHere(func() { Mailbox(b).PostSystemMessage(&actor.Stop{}) })
		require.Equal(t, []any{&actor.Stop{}}, r.system, "the stop fn queued was invoked before RunHere returned")
		require.Equal(t, []uint64{testkit.GoroutineID()}, r.invokedOn(), "on the calling goroutine")
		require.Zero(t, d.scheduled(), "the dispatcher was never asked")

		b.RunHere(func() { post(t, b, "a") })
		require.Equal(t, []string{"a"}, r.claimed(), "a turn-lane message is claimed there too")
		require.Equal(t, []uint64{testkit.GoroutineID(), testkit.GoroutineID()}, r.invokedOn())
		require.Zero(t, d.scheduled())
		b.EndTurn()

		b.RunHere(func() {})
		require.Len(t, r.invokedOn(), 2, "nothing queued, nothing invoked")

		Mailbox(b).PostSystemMessage(&actor.Started{})
		require.Equal(t, 1, d.scheduled(), "RunHere left the mailbox unscheduled: later messages wake the dispatcher")
		require.Len(t, r.system, 1)
		d.runAll()
		require.Equal(t, []any{&actor.Stop{}, &actor.Started{}}, r.system)
	})
}

func TestRunHereLeavesAScheduledRunAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r, d := newHeld()
		Mailbox(b).PostSystemMessage(&actor.Started{})
		require.Equal(t, 1, d.scheduled(), "a run is scheduled and not yet going")

		called := false
		b.RunHere(func() {
			called = true
			Mailbox(b).PostSystemMessage(&actor.Stop{})
		})
		require.True(t, called)
		require.Empty(t, r.system, "RunHere only called fn: the scheduled run handles what it queued")
		require.Empty(t, r.invokedOn())
		require.Equal(t, 1, d.scheduled(), "and no second run was scheduled")

		d.runAll()
		require.Equal(t, []any{&actor.Started{}, &actor.Stop{}}, r.system, "the scheduled run processed both, in order")
	})
}

func TestRunHereDuringATurnProcessesOnlySystemMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r, d := newHeld()
		b.RunHere(func() { post(t, b, "a") })
		post(t, b, "b")
		require.Equal(t, []string{"a"}, r.claimed())

		b.RunHere(func() { Mailbox(b).PostSystemMessage(&actor.Stop{}) })
		require.Equal(t, []any{&actor.Stop{}}, r.system, "a system message gets through while a turn runs")
		require.Equal(t, []string{"a"}, r.claimed(), "but b waits for the turn to end")
		require.Zero(t, d.scheduled())
		b.EndTurn()
		require.Equal(t, []string{"a", "b"}, r.claimed())
		b.EndTurn()
	})
}

// AfterIdle callbacks registered while a turn runs run on the goroutine of
// the EndTurn that makes the inbox idle, in order, before it returns.
func TestAfterIdleRunsOnTheLastEndTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r, _ := newHeld()
		b.RunHere(func() { post(t, b, "a") })
		post(t, b, "b")
		var ran []string
		var on []uint64
		b.AfterIdle(func() { ran, on = append(ran, "first"), append(on, testkit.GoroutineID()) })
		b.AfterIdle(func() { ran, on = append(ran, "second"), append(on, testkit.GoroutineID()) })

		b.EndTurn() // b is claimed in this EndTurn's own run: not idle yet
		require.Equal(t, []string{"a", "b"}, r.claimed())
		require.Empty(t, ran, "the inbox is still running b")

		b.EndTurn()
		require.Equal(t, []string{"first", "second"}, ran, "both ran, in order, before EndTurn returned")
		require.Equal(t, []uint64{testkit.GoroutineID(), testkit.GoroutineID()}, on, "on the goroutine of that EndTurn")
		synctest.Wait()
		require.Len(t, ran, 2, "and only once")
	})
}

// On an idle inbox, or one made idle by Cancel or Close (the caller may be
// an actor), AfterIdle callbacks run on a new goroutine.
func TestAfterIdleElsewhereRunsOnANewGoroutine(t *testing.T) {
	for name, makeIdle := range map[string]func(b *Inbox){
		"already idle": func(*Inbox) {},
		"cancel":       func(b *Inbox) { b.Cancel(agent.CancelCause{Kind: agent.CauseParent}, false) },
		"close":        func(b *Inbox) { b.Close(agent.CancelCause{Kind: agent.CauseDisposed}) },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, _, d := newHeld()
				if name != "already idle" {
					post(t, b, "queued") // held by the dispatcher: queued, never claimed
					require.Equal(t, Running, b.Status())
				}
				self := testkit.GoroutineID()
				ran := make(chan uint64, 1)
				b.AfterIdle(func() { ran <- testkit.GoroutineID() })
				makeIdle(b)
				synctest.Wait()
				select {
				case g := <-ran:
					require.NotEqual(t, self, g)
				default:
					t.Fatal("the callback did not run once the inbox was idle")
				}
				require.LessOrEqual(t, d.scheduled(), 1)
			})
		})
	}
}

// A message is never claimed before its agent/inbox/enqueue event has
// reached the observer, even by a mailbox run already going: a listener
// that cancels on enqueue (a message accepted but not yet claimed) always finds the
// message still queued.
func TestNoClaimBeforeTheEnqueueEventIsDelivered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &heldDispatcher{}
		inEnqueue, release := make(chan struct{}), make(chan struct{})
		var b *Inbox
		var discarded []string
		b = newInbox(func(e Event) {
			if e.Type == Enqueue {
				close(inEnqueue)
				<-release
				discarded = b.Cancel(agent.CancelCause{Kind: agent.CauseUser}, false)
			}
		})
		r := &recorder{box: b}
		Mailbox(b).RegisterHandlers(r, d)
		Mailbox(b).PostSystemMessage(&actor.Started{}) // a run is scheduled before the post
		go post(t, b, "m")
		<-inEnqueue
		d.runAll() // that run goes while the enqueue listener holds the event
		require.Empty(t, r.claimed(), "the run left the message alone")
		close(release)
		synctest.Wait()
		d.runAll()
		require.Empty(t, r.claimed(), "the listener discarded it in its admission window")
		require.Equal(t, []string{"m"}, discarded)
	})
}

// Once the enqueue event is delivered, the message is claimed: the
// goroutine that delivered it wakes the mailbox.
func TestTheDelivererWakesTheMailbox(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &heldDispatcher{}
		inEnqueue, release := make(chan struct{}), make(chan struct{})
		b := newInbox(func(e Event) {
			if e.Type == Enqueue {
				close(inEnqueue)
				<-release
			}
		})
		r := &recorder{box: b}
		Mailbox(b).RegisterHandlers(r, d)
		go post(t, b, "m")
		<-inEnqueue
		require.Zero(t, d.scheduled(), "no run is woken before the event is out")
		close(release)
		synctest.Wait()
		require.Equal(t, 1, d.scheduled())
		d.runAll()
		require.Equal(t, []string{"m"}, r.claimed())
		b.EndTurn()
	})
}

// runnerDispatcher takes mailbox runs as Runners only (as the runtime's
// pool can) and holds them until runAll; a closure fails the test.
type runnerDispatcher struct {
	t    *testing.T
	mu   sync.Mutex
	held []interface{ Run() }
}

func (d *runnerDispatcher) Schedule(func()) {
	d.t.Error("a closure was scheduled; the mailbox itself was expected")
}
func (d *runnerDispatcher) Throughput() int { return DefaultThroughput }

func (d *runnerDispatcher) ScheduleRunner(r interface{ Run() }) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.held = append(d.held, r)
}

func (d *runnerDispatcher) runAll() int {
	d.mu.Lock()
	held := d.held
	d.held = nil
	d.mu.Unlock()
	for _, r := range held {
		r.Run()
	}
	return len(held)
}

func TestADispatcherTakingRunnersGetsTheMailboxItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		r.box = newInbox(r.observe)
		d := &runnerDispatcher{t: t}
		Mailbox(r.box).RegisterHandlers(r, d)
		post(t, r.box, "a")
		require.Equal(t, 1, d.runAll(), "the post scheduled one run")
		require.Equal(t, []string{"a"}, r.claimed())
		post(t, r.box, "b")
		require.Zero(t, d.runAll(), "a turn runs: the next message waits for its end")
		r.box.EndTurn()
		require.Equal(t, []string{"a", "b"}, r.claimed(), "EndTurn ran the mailbox on its own goroutine")
		Mailbox(r.box).PostSystemMessage(&actor.Started{})
		require.Equal(t, 1, d.runAll(), "a system message during the turn schedules a run")
		require.Equal(t, []any{&actor.Started{}}, r.system)
		r.box.EndTurn()
	})
}
