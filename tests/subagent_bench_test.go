package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/activation"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/dsh-actors/dsh-actors/subagent"
	"github.com/stretchr/testify/require"
)

var bg = context.Background()

// noSyncFS is the real file system without fsync: "clean" sessions whose
// durability costs nothing, so the runtime's own overhead shows.
type noSyncFS struct{ session.OSFS }

func (n noSyncFS) OpenFile(name string, flag int, perm fs.FileMode) (session.File, error) {
	f, err := n.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

func (noSyncFS) SyncDir(string) error { return nil }

type noSyncFile struct{ session.File }

func (noSyncFile) Sync() error { return nil }

// benchWorld is a runtime over a JSONL store with a subagent service and a
// top-level parent; sync chooses real fsync or none.
type benchWorld struct {
	rt     *actors.Runtime
	svc    *subagent.Service
	parent *parent.Handle
	ends   chan *subagent.EndEvent
	store  session.Store
}

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

func newBenchWorld(b *testing.B, root string, sync bool) *benchWorld {
	b.Helper()
	var opts []session.Option
	if !sync {
		opts = append(opts, session.WithFS(noSyncFS{}))
	}
	store, err := session.OpenJSONL(root, opts...)
	require.NoError(b, err)
	rt, err := actors.New(actors.Options{Sessions: session.NewSessions(store)})
	require.NoError(b, err)
	w := &benchWorld{rt: rt, store: store, svc: subagent.New(rt, query.New(rt.Sessions())), ends: make(chan *subagent.EndEvent, 1<<16)}
	_, err = w.svc.RegisterProvider(subagent.NewSpawn(rt))
	require.NoError(b, err)
	w.svc.Subscribe(func(ev subagent.Event) {
		if end, ok := ev.(*subagent.EndEvent); ok {
			w.ends <- end
		}
	})
	w.parent, err = rt.ResumeAgent(bg, "parent", parent.Spec{})
	if err != nil {
		w.parent, err = rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ID: "parent"}})
	}
	require.NoError(b, err)
	b.Cleanup(func() {
		require.NoError(b, rt.Close(bg))
		require.NoError(b, store.Close())
	})
	return w
}

func (w *benchWorld) start(b *testing.B, p *parent.Handle, prompt string) string {
	s, err := w.svc.StartContinuable(bg, subagent.ContinuableSpec{Provider: subagent.SpawnName, Label: "bench",
		Request: subagent.ContinuableRequest{Prompt: agent.Text(prompt), Parent: p}})
	if err != nil {
		b.Fatal(err)
	}
	return s.ChildID
}

// BenchmarkSubagentStartToSettled: one continuable child from
// StartContinuable until its epoch ended (turn run, flushed, disposed),
// against a bare protoactor actor spawned and stopped, in one run.
func BenchmarkSubagentStartToSettled(b *testing.B) {
	b.Run("protoactor-spawn-stop", func(b *testing.B) {
		system := quietSystem()
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
				w.start(b, w.parent, "reply done")
				<-w.ends
			}
		})
	}
}

// syntheticChild is a settled continuable child of "parent" whose log has
// about n events: its seed, then turns of six events.
func syntheticChild(id string, n int) session.Log {
	data, _ := json.Marshal(descriptor.Data{Version: descriptor.Version, Provider: subagent.SpawnName, Label: "bench"})
	events := []session.Event{
		{Type: descriptor.EventType, Data: data},
		{Type: session.EndSeedType, Data: json.RawMessage(`{}`)},
	}
	for turn := 1; len(events) < n; turn++ {
		user, _ := json.Marshal(agent.Message{Content: agent.Text("work"), Source: agent.Source{Kind: "user"}, Role: "user", ID: fmt.Sprintf("m%d", turn)})
		reply := fmt.Sprintf(`{"turn":%d,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"source":{"kind":"model","provider":"scripted","model":"scripted"},"id":"a%d"}}`, turn, turn)
		mark := json.RawMessage(fmt.Sprintf(`{"turn":%d,"step":1}`, turn))
		events = append(events,
			session.Event{Type: "user/message", Data: user, SurfaceOp: json.RawMessage(`"append"`)},
			session.Event{Type: "turn/start", Data: json.RawMessage(fmt.Sprintf(`{"turn":%d,"trigger":{"kind":"message"}}`, turn))},
			session.Event{Type: "step/start", Data: mark},
			session.Event{Type: "assistant/message", Data: json.RawMessage(reply), SurfaceOp: json.RawMessage(`"append"`)},
			session.Event{Type: "step/end", Data: mark},
			session.Event{Type: "turn/end", Data: json.RawMessage(fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn))},
		)
	}
	for i := range events {
		events[i].Seq, events[i].Time = int64(i), 1_700_000_000_000
	}
	return session.Log{Header: session.Header{ID: id, CreatedAt: 1_700_000_000_000, ParentSession: "parent",
		Origin: "subagent", DelegationDepth: 1}, Events: events}
}

// BenchmarkSubagentFollowup: a follow-up until its acceptance, to a
// resident (waiting) child and to a settled child that is cold-resumed from
// a log of 10, 1,000 or 100,000 events (rewritten before each round, so
// every round reads the same size). The resume should grow linearly.
func BenchmarkSubagentFollowup(b *testing.B) {
	b.Run("resident", func(b *testing.B) {
		w := newBenchWorld(b, benchDir(b), false)
		child := w.start(b, w.parent, "reply ready")
		<-w.ends
		_, err := w.svc.Followup(bg, w.parent, child, agent.Text("spawn holder: sleep 1h"), agent.Source{Kind: "user"})
		require.NoError(b, err)
		h := waitLive(w.rt, child)
		for b.Loop() {
			if _, err := w.svc.Followup(bg, w.parent, child, agent.Text("reply again"), agent.Source{Kind: "user"}); err != nil {
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
			log := syntheticChild("cold-child", size)
			require.NoError(b, session.WriteSynthetic(root, log))
			w := newBenchWorld(b, root, false)
			for b.Loop() {
				if _, err := w.svc.Followup(bg, w.parent, "cold-child", agent.Text("reply again"), agent.Source{Kind: "user"}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				<-w.ends
				require.NoError(b, session.WriteSynthetic(root, log))
				b.StartTimer()
			}
		})
	}
}

// waitLive returns the live agent id once it is published.
func waitLive(rt *actors.Runtime, id string) *parent.Handle {
	for {
		if h := rt.Agent(id); h != nil {
			return h
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkSubagentScopedDrain: the child-first scoped drain of a forest of
// fan-out 10 and depth 4 below one parent (11,110 resident continuable
// children, every one in a running turn), against bare protoactor
// StopFuture on a tree of 11,111 actors of the same shape, in one run.
func BenchmarkSubagentScopedDrain(b *testing.B) {
	const fanout, depth = 10, 4
	b.Run("protoactor-stop-tree", func(b *testing.B) {
		system := quietSystem()
		for b.Loop() {
			b.StopTimer()
			root := spawnTree(system, fanout, depth)
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
			w := newBenchWorld(b, benchDir(b), false)
			w.growAgents(b, w.parent, fanout, depth)
			b.StartTimer()
			if err := w.rt.Close(bg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("continuable-drain", func(b *testing.B) {
		w := newBenchWorld(b, benchDir(b), false)
		for b.Loop() {
			b.StopTimer()
			p, err := w.rt.StartAgent(bg, parent.CreateSpec{})
			require.NoError(b, err)
			n := w.grow(b, p, fanout, depth)
			b.StartTimer()
			if err := w.svc.DrainContinuableDescendants(bg, []*parent.Handle{p}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			for range n {
				<-w.ends
			}
			require.NoError(b, p.Dispose(bg))
			b.StartTimer()
		}
	})
}

// grow starts fanout children below p, down to depth levels, each in a
// turn that runs until cancelled, and returns how many it started.
func (w *benchWorld) grow(b *testing.B, p *parent.Handle, fanout, depth int) int {
	level := []*parent.Handle{p}
	total := 0
	for range depth {
		var next []*parent.Handle
		var mu sync.Mutex
		var wg sync.WaitGroup
		jobs := make(chan *parent.Handle)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for owner := range jobs {
					id := w.start(b, owner, "sleep 1h")
					mu.Lock()
					next = append(next, w.rt.Agent(id))
					mu.Unlock()
				}
			}()
		}
		for _, owner := range level {
			for range fanout {
				jobs <- owner
			}
		}
		close(jobs)
		wg.Wait()
		total += len(next)
		level = next
	}
	return total
}

// quietSystem is a protoactor system that logs nothing.
func quietSystem() *actor.ActorSystem {
	return actor.NewActorSystem(actor.WithLoggerFactory(activation.LoggerFactory(nil)))
}

// growAgents starts the same shape as grow with plain agents (no
// manager, no Activation): the runtime's own child-first close is the
// reference for what the manager adds.
func (w *benchWorld) growAgents(b *testing.B, p *parent.Handle, fanout, depth int) {
	level := []*parent.Handle{p}
	for range depth {
		var next []*parent.Handle
		for _, owner := range level {
			for range fanout {
				h, err := w.rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ParentSession: owner.ID()}})
				require.NoError(b, err)
				_, err = h.Followup(bg, agent.Text("sleep 1h"), agent.Source{Kind: "user"})
				require.NoError(b, err)
				next = append(next, h)
			}
		}
		level = next
	}
}

// spawnTree spawns a protoactor tree of the given shape (children spawned
// by their parents) and returns its root once every actor started.
func spawnTree(system *actor.ActorSystem, fanout, depth int) *actor.PID {
	var started sync.WaitGroup
	var count atomic.Int64
	var props *actor.Props
	props = actor.PropsFromFunc(func(c actor.Context) {
		if level, ok := c.Message().(int); ok {
			for range fanout {
				if level < depth {
					started.Add(1)
					c.Send(c.Spawn(props), level+1)
				}
			}
			count.Add(1)
			started.Done()
		}
	})
	started.Add(1)
	root := system.Root.Spawn(props)
	system.Root.Send(root, 0)
	started.Wait()
	return root
}
