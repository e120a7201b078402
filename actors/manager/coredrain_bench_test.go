package manager

import (
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/internal/cpuclock"
	"github.com/google/uuid"
)

// BenchmarkCoreDrain steps the core alone through row 6's drain (fan-out
// 10, depth 4: 11,110 resident descendants of one top-level agent): the
// scoped drain's request, then each descendant's release child-first and
// each parent's agent/disposed. It reports the core's decisions per
// drained agent (ns/agent, and the process's CPU time in cpu-ns/agent), without the actor, the agents or the store.
func BenchmarkCoreDrain(b *testing.B) {
	var agents int
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		c, root, forest := coreForest(10, 4)
		agents = len(forest)
		runtime.GC()
		b.StartTimer()
		cpu0 := cpuclock.Process()
		c.recycle(c.step(scopedDrainRequest{ctx: bg, parents: []*parent.Handle{root}, result: make(chan error, 1)}))
		for i := len(forest) - 1; i >= 0; i-- { // children were installed after their owners
			a := forest[i]
			delete(c.env.(*tableEnv).live, a.handle)
			a.link.out = teardownOutcome{epoch: epochReport{StopReason: agent.Aborted}}
			c.recycle(c.step(released{a}))
			if len(a.owned) > 0 || a.heldRelease != nil || !a.gone {
				b.Fatalf("%s was not released", a.childID)
			}
			if c.endParents.has(a.childID) { // as the bus listener filters
				c.recycle(c.step(agentDisposed{id: a.childID}))
			}
		}
		cpu += cpuclock.Process() - cpu0
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*agents), "ns/agent")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*agents), "cpu-ns/agent")
}

// coreForest installs a forest of resident epochs below a top-level
// agent in a core whose env is a table, each owned by its parent's epoch
// and spawned under it, in creation order (parents first).
func coreForest(fanout, depth int) (*core, *parent.Handle, []*activation) {
	env := newTableEnv()
	c := &core{st: newState(), env: env, logger: slog.New(slog.DiscardHandler)}
	root := env.agent("parent")
	level := []*parent.Handle{root}
	var forest []*activation
	for range depth {
		var next []*parent.Handle
		for _, p := range level {
			for range fanout {
				id := uuid.NewString()
				h := env.open(id, p)
				ms := materializeSpec{childID: id, provider: "test", parent: p, under: p}
				if p == root {
					ms.under = nil
				}
				a := c.install(ms, h, env.liveLineage(p))
				if err := c.acquireOwnership(p, a); err != nil {
					panic(err)
				}
				forest = append(forest, a)
				next = append(next, h)
			}
		}
		level = next
	}
	c.effects = nil
	return c, root, forest
}
