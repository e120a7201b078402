package tests

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/bench"
	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
	"github.com/dsh-actors/dsh-actors/internal/storegen"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

var bg = context.Background()

// benchWorld is internal/bench's World (a runtime opened with dsh.Open over
// a JSONL store, with a top-level agent "parent"), closed at cleanup.
type benchWorld struct{ *bench.World }

// benchDir is a fresh store folder: under $DSH_BENCH_DIR when set (a tmpfs
// such as /dev/shm takes the file system's directory and open costs out of
// the figures), else the test's temporary folder.
func benchDir(b *testing.B) string {
	b.Helper()
	base := os.Getenv("DSH_BENCH_DIR")
	if base == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(base, "bench-*")
	require.NoError(b, err)
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// newBenchWorld opens a World over root; sync chooses real fsync or none.
func newBenchWorld(b *testing.B, root string, sync bool) benchWorld {
	b.Helper()
	w, err := bench.OpenWorld(bg, root, sync)
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, w.Close(bg)) })
	return benchWorld{w}
}

func (w benchWorld) start(b *testing.B, p *dsh.Handle, prompt string) string {
	id, err := w.Start(bg, p, prompt)
	if err != nil {
		b.Fatal(err)
	}
	return id
}

func (w benchWorld) waitEnd(b *testing.B, id string) {
	if err := w.WaitEnd(bg, id); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSubagentStartToSettled: one continuable child from
// Spawn until its epoch ended (turn run, flushed, disposed),
// against a bare protoactor actor spawned and stopped, in one run.
func BenchmarkSubagentStartToSettled(b *testing.B) {
	b.Run("protoactor-spawn-stop", func(b *testing.B) {
		system := bench.QuietSystem()
		props := actor.PropsFromFunc(func(actor.Context) {})
		for b.Loop() {
			pid := system.Root.Spawn(props)
			if err := system.Root.StopFuture(pid).Wait(); err != nil {
				b.Fatal(err)
			}
		}
		system.Shutdown()
	})
	for _, synced := range []bool{false, true} {
		b.Run(fmt.Sprintf("continuable/fsync=%t", synced), func(b *testing.B) {
			w := newBenchWorld(b, benchDir(b), synced)
			for b.Loop() {
				w.waitEnd(b, w.start(b, w.Parent, "reply done"))
			}
		})
	}
}

// BenchmarkSubagentFollowup: a follow-up until its acceptance, to a
// resident (waiting) child and to a settled child that is cold-resumed from
// a log of 10, 1,000 or 100,000 events (rewritten before each round, so
// every round reads the same size). The resume should grow linearly.
func BenchmarkSubagentFollowup(b *testing.B) {
	b.Run("resident", func(b *testing.B) {
		w := newBenchWorld(b, benchDir(b), false)
		child := w.start(b, w.Parent, "reply ready")
		w.waitEnd(b, child)
		require.NoError(b, w.Followup(bg, child, "spawn holder: sleep 1h"))
		h := waitLive(b, w.Runtime, child)
		for b.Loop() {
			if err := w.Followup(bg, child, "reply again"); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			require.NoError(b, h.WhenIdle(bg))
			b.StartTimer()
		}
	})
	for _, size := range []int{10, 1_000, 100_000} {
		b.Run(fmt.Sprintf("cold-resume/events=%d", size), func(b *testing.B) {
			root := benchDir(b)
			log := storegen.ContinuableChild("cold-child", "parent", size)
			_, err := storegen.Write(root, log)
			require.NoError(b, err)
			w := newBenchWorld(b, root, false)
			for b.Loop() {
				if err := w.Followup(bg, "cold-child", "reply again"); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				w.waitEnd(b, "cold-child")
				_, err := storegen.Write(root, log)
				require.NoError(b, err)
				b.StartTimer()
			}
		})
	}
}

// waitLive returns the live agent id once it is published, failing tb
// when that takes longer than testkit.WaitLimit.
func waitLive(tb testing.TB, rt *dsh.Runtime, id string) *dsh.Handle {
	tb.Helper()
	var h *dsh.Handle
	testkit.Until(tb, func() bool {
		var live bool
		h, live = rt.Agent(id)
		return live
	}, "agent "+id+" to be published")
	return h
}

// BenchmarkSubagentScopedDrain: the child-first scoped drain of a forest of
// fan-out 10 and depth 4 below one parent (11,110 resident continuable
// children, every one in a running turn, in a fresh runtime and store each
// iteration), against bare protoactor StopFuture on a tree of 11,111
// actors of the same shape, in one run; actors-registry-close is the
// runtime's own child-first Close of the same shape of plain agents.
func BenchmarkSubagentScopedDrain(b *testing.B) {
	const fanout, depth = 10, 4
	b.Run("protoactor-stop-tree", func(b *testing.B) {
		system := bench.QuietSystem()
		for b.Loop() {
			b.StopTimer()
			root, _ := bench.SpawnTree(system, fanout, depth)
			runtime.GC()
			b.StartTimer()
			if err := system.Root.StopFuture(root).Wait(); err != nil {
				b.Fatal(err)
			}
		}
		system.Shutdown()
	})
	b.Run("actors-registry-close", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			rt, err := actors.New(actors.Options{Root: benchDir(b), StoreOptions: []session.Option{session.WithFS(sessionfs.NoSync{})}})
			require.NoError(b, err)
			p, err := rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ID: "parent"}})
			require.NoError(b, err)
			growAgents(b, rt, p, fanout, depth)
			runtime.GC()
			b.StartTimer()
			if err := rt.Close(bg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("continuable-drain", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			w := newBenchWorld(b, benchDir(b), false)
			p, err := w.Runtime.StartAgent(bg, "")
			require.NoError(b, err)
			ids, err := w.Grow(bg, p, fanout, depth)
			require.NoError(b, err)
			runtime.GC()
			b.StartTimer()
			if err := w.Runtime.Drain(bg, p); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			for _, id := range ids {
				w.waitEnd(b, id)
			}
			require.NoError(b, w.Close(bg))
			b.StartTimer()
		}
	})
}

// growAgents starts the same shape as World.Grow with plain agents (no
// manager, no Activation): the runtime's own child-first close is the
// reference for what the manager adds.
func growAgents(b *testing.B, rt *actors.Runtime, p *parent.Handle, fanout, depth int) {
	level := []*parent.Handle{p}
	for range depth {
		var next []*parent.Handle
		for _, owner := range level {
			for range fanout {
				h, err := rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ParentSession: owner.ID()}})
				require.NoError(b, err)
				_, err = h.Followup(bg, event.Text("sleep 1h"), event.Source{Kind: "user"})
				require.NoError(b, err)
				next = append(next, h)
			}
		}
		level = next
	}
}
