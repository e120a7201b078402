package activation

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// lifecycle records the release steps of a tree of agents, in order.
type lifecycle struct {
	mu     sync.Mutex
	events []string
}

func (l *lifecycle) note(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *lifecycle) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// tree starts agents in one actor system over memory-only sessions.
type tree struct {
	t        *testing.T
	host     actorkit.Host
	sessions *session.Sessions
	record   *lifecycle
}

func newTree(t *testing.T) *tree {
	host := actorkit.Host{System: actorkit.NewSystem(nil)}
	t.Cleanup(host.System.Shutdown)
	return &tree{t: t, host: host, sessions: session.NewSessions(nil), record: &lifecycle{}}
}

// start starts agent id under parent (nil: at the root); its release step
// records "released id".
func (tr *tree) start(id string, impl agent.Agent, parent *Activation) (*Activation, error) {
	live, err := tr.sessions.Create(bg, session.Header{ID: id}, nil)
	require.NoError(tr.t, err)
	return Start(Config{Agent: impl, Session: live, Actors: tr.host, Parent: parent,
		Release: func() { tr.record.note("released " + id) }})
}

func (tr *tree) mustStart(id string, impl agent.Agent, parent *Activation) *Activation {
	a, err := tr.start(id, impl, parent)
	require.NoError(tr.t, err)
	return a
}

// slowToStop is an agent whose turn, once cancelled, ends only when gate
// is closed.
func slowToStop(gate <-chan struct{}) agent.Agent {
	return agent.Func(func(ctx context.Context, _ agent.Host, _ event.UserMessage) (agent.StopReason, error) {
		<-ctx.Done()
		<-gate
		return agent.Aborted, nil
	})
}

// stopped reports whether a's actor has stopped.
func stopped(a *Activation) bool {
	select {
	case <-a.Done():
		return true
	default:
		return false
	}
}

func TestAStopReleasesChildFirstAndWaitsForASlowGrandchild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTree(t)
		gate := make(chan struct{})
		scripted := agent.Scripted(agent.Options{})
		p := tr.mustStart("p", scripted, nil)
		followup(t, p, "sleep 1h") // the children are spawned while p's turn runs
		synctest.Wait()
		c1 := tr.mustStart("c1", scripted, p)
		c2 := tr.mustStart("c2", scripted, p)
		g := tr.mustStart("g", slowToStop(gate), c1)
		followup(t, c1, "sleep 1h")
		followup(t, g, "hold")
		synctest.Wait()

		p.Stop(agent.CancelCause{Kind: agent.CauseDisposed})
		synctest.Wait()
		require.Equal(t, []string{"released c2"}, tr.record.seen(),
			"c1 waits for its slow child g, and p for c1; c2 has nothing to wait for")
		require.False(t, stopped(p) || stopped(c1) || stopped(g))
		require.True(t, stopped(c2))

		close(gate)
		synctest.Wait()
		require.Equal(t, []string{"released c2", "released g", "released c1", "released p"}, tr.record.seen())
		require.True(t, stopped(p) && stopped(c1) && stopped(g))
		require.Equal(t, []string{`{"turn":1,"reason":{"kind":"disposed"}}`}, turnEnds(g))
		require.NoError(t, p.Dispose(bg), "a Dispose after the stop returns at once")
	})
}

// stoppingSlowly starts a parent p and its child c, whose running turn,
// once cancelled, ends only when gate is closed.
func stoppingSlowly(t *testing.T) (tr *tree, p, c *Activation, gate chan struct{}) {
	tr = newTree(t)
	gate = make(chan struct{})
	p = tr.mustStart("p", agent.Scripted(agent.Options{}), nil)
	c = tr.mustStart("c", slowToStop(gate), p)
	followup(t, c, "hold")
	synctest.Wait()
	return tr, p, c, gate
}

func TestASpawnUnderAStoppingAgentIsRefusedAndTheStopEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, p, _, gate := stoppingSlowly(t)

		p.Stop(agent.CancelCause{Kind: agent.CauseDisposed})
		synctest.Wait()
		_, err := tr.start("late", agent.Scripted(agent.Options{}), p)
		require.ErrorIs(t, err, fault.ActivationClosing, "a stopping agent takes no child")
		require.ErrorContains(t, err, `agent "p" cannot spawn a child`)

		close(gate)
		synctest.Wait()
		require.True(t, stopped(p), "the refused spawn left nothing for the stop to wait for")
		require.Equal(t, []string{"released c", "released p"}, tr.record.seen())
		_, err = tr.start("later", agent.Scripted(agent.Options{}), p)
		require.ErrorIs(t, err, fault.ActivationClosing, "a stopped agent takes no child")
	})
}

// A stop protoactor begins (as the supervisor's would) while the agent's
// own stop waits for a slow child takes nothing twice: each release step
// runs once, child first, and every actor stops.
func TestAProtoactorStopDuringAStopReleasesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, p, c, gate := stoppingSlowly(t)

		p.Stop(agent.CancelCause{Kind: agent.CauseParent})
		synctest.Wait()
		tr.host.System.Root.Stop(p.pid)
		tr.host.System.Root.Stop(c.pid)
		synctest.Wait()
		require.Empty(t, tr.record.seen(), "c's turn has not ended")

		close(gate)
		synctest.Wait()
		require.Equal(t, []string{"released c", "released p"}, tr.record.seen())
		require.True(t, stopped(p) && stopped(c))
		require.Equal(t, []string{`{"turn":1,"reason":{"kind":"aborted"}}`}, turnEnds(c), "the first stop's cause")
	})
}

// A family returns its children in spawn order however they terminate,
// and its stop's last wait ends once every child is gone and the agent
// is idle.
func TestAFamilyCountsItsChildrenByActor(t *testing.T) {
	var f family
	pids := []*actor.PID{actor.NewPID("local", "p/a"), actor.NewPID("local", "p/b"), actor.NewPID("local", "p/c")}
	f.mu.Lock()
	for _, pid := range pids {
		f.add(nil, pid)
	}
	f.mu.Unlock()
	require.False(t, f.gone(pids[1]), "a child gone before the stop ends no wait")
	require.False(t, f.gone(actor.NewPID("local", "p/stranger")), "an unknown actor is no child")
	children := f.close()
	require.Len(t, children, 2)
	require.Equal(t, []string{"p/a", "p/c"}, []string{children[0].pid.Id, children[1].pid.Id}, "spawn order")
	require.False(t, f.gone(pids[2]))
	require.False(t, f.idle(), "a child is still awaited")
	require.True(t, f.gone(pids[0]), "the last wait")
}

// BenchmarkFamilyGone is the Terminated of each of many children of one
// agent, in an order other than their spawn order: flat per child.
func BenchmarkFamilyGone(b *testing.B) {
	for _, n := range []int{10, 1000, 100_000} {
		b.Run(fmt.Sprintf("children=%d", n), func(b *testing.B) {
			pids := make([]*actor.PID, n)
			for i := range pids {
				pids[i] = actor.NewPID("local", fmt.Sprintf("p/%d", i))
			}
			for b.Loop() {
				var f family
				f.mu.Lock()
				for _, pid := range pids {
					f.add(nil, pid)
				}
				f.mu.Unlock()
				f.close()
				for i := range pids {
					f.gone(pids[(i*7919)%n])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/child")
		})
	}
}
