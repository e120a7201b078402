package actors

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/actors/activation"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/session"
)

var idleAgents = flag.Int("bench.idle-agents", 100_000, "live agents BenchmarkIdleAgentBytes creates")

// noop is an agent whose turns do nothing.
var noop = agent.Func(func(context.Context, agent.Host, agent.Message) (agent.StopReason, error) {
	return agent.Completed, nil
})

func mustOpen(b *testing.B, opts Options) *Runtime {
	b.Helper()
	rt, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := rt.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
	})
	return rt
}

func mustStart(b *testing.B, rt *Runtime, spec parent.CreateSpec) *parent.Handle {
	b.Helper()
	h, err := rt.StartAgent(context.Background(), spec)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// echo is a bare protoactor actor answering every string.
type echo struct{}

func (echo) Receive(c actor.Context) {
	if s, ok := c.Message().(string); ok {
		c.Respond(s)
	}
}

// timer sums the durations of the timed sections of one operation.
type timer struct {
	total time.Duration
	n     int
}

func (t *timer) time(op func()) {
	start := time.Now()
	op()
	t.total += time.Since(start)
	t.n++
}

func (t *timer) ns() float64 { return float64(t.total.Nanoseconds()) / float64(max(t.n, 1)) }

// BenchmarkFollowupAdmission measures, interleaved in one run, the round
// trip until the caller holds the MessageID of a follow-up to an idle agent
// (pooled and default dispatcher), a raw channel request/reply, and a bare
// protoactor RequestFuture; and the full turn round trip (follow-up to
// turn/end) with both dispatchers. The agent is idle before every timed
// follow-up (the wait is not timed).
func BenchmarkFollowupAdmission(b *testing.B) {
	ctx := context.Background()
	pooled := mustOpen(b, Options{Workers: 2})
	plain := mustOpen(b, Options{Dispatcher: actor.NewDefaultDispatcher(300)})
	hp := mustStart(b, pooled, parent.CreateSpec{Spec: parent.Spec{Agent: noop}})
	hd := mustStart(b, plain, parent.CreateSpec{Spec: parent.Spec{Agent: noop}})
	requests, replies := make(chan int), make(chan int)
	go func() {
		for r := range requests {
			replies <- r
		}
	}()
	defer close(requests)
	system := actor.NewActorSystem(actor.WithLoggerFactory(activation.LoggerFactory(nil)))
	defer system.Shutdown()
	pid := system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return echo{} }))
	defer system.Root.Stop(pid)

	var admitPool, admitDefault, channel, future, turnPool, turnDefault timer
	content := agent.Text("x")
	src := agent.Source{Kind: "user"}
	b.ResetTimer()
	for range b.N {
		admitPool.time(func() { _, _ = pooled.Followup(ctx, hp.ID(), content, src) })
		_ = hp.WhenIdle(ctx)
		admitDefault.time(func() { _, _ = plain.Followup(ctx, hd.ID(), content, src) })
		_ = hd.WhenIdle(ctx)
		channel.time(func() { requests <- 1; <-replies })
		future.time(func() { _, _ = system.Root.RequestFuture(pid, "x", time.Second).Result() })
		turnPool.time(func() { _, _ = hp.Followup(ctx, content, src); _ = hp.WhenIdle(ctx) })
		turnDefault.time(func() { _, _ = hd.Followup(ctx, content, src); _ = hd.WhenIdle(ctx) })
	}
	b.StopTimer()
	b.ReportMetric(admitPool.ns(), "ns/followup")
	b.ReportMetric(admitDefault.ns(), "ns/followup-default-dispatcher")
	b.ReportMetric(channel.ns(), "ns/chan-rt")
	b.ReportMetric(future.ns(), "ns/future-rt")
	b.ReportMetric(admitPool.ns()/channel.ns(), "x-chan")
	b.ReportMetric(future.ns()/admitPool.ns(), "future/followup")
	b.ReportMetric(turnPool.ns(), "ns/turn-rt")
	b.ReportMetric(turnDefault.ns(), "ns/turn-rt-default-dispatcher")
}

// BenchmarkTurnThroughput runs b.N scripted `reply` turns (one agent, then
// 100 agents in parallel, b.N/100 turns each) with every event logged to a
// JSONL store (write-behind group commit), until everything is durable.
// In the same run it measures two raw ceilings with lines of the same
// sizes: the group-commit append rate (64 writers, each waiting until its
// line is durable; one write and one fdatasync per batch — the rate
// DESIGN.md quotes) and a pipelined appender (one producer that never
// waits, one file per agent). It reports events/s of each and our
// percentage of both.
func BenchmarkTurnThroughput(b *testing.B) {
	for _, agents := range []int{1, 100} {
		b.Run(fmt.Sprintf("agents=%d", agents), func(b *testing.B) {
			turns := max(b.N/agents, 1)
			ours, lines := runTurns(b, agents, turns)
			events := float64(agents * len(lines))
			groupCommit := events / rawAppend(b, 1, 64, repeat(lines, agents), true).Seconds()
			pipelined := events / rawAppend(b, agents, 1, lines, false).Seconds()
			b.ReportMetric(events/ours.Seconds(), "events/s")
			b.ReportMetric(float64(agents*turns)/ours.Seconds(), "turns/s")
			b.ReportMetric(groupCommit, "groupcommit-events/s")
			b.ReportMetric(pipelined, "pipelined-events/s")
			b.ReportMetric(100*events/ours.Seconds()/groupCommit, "%-of-groupcommit")
			b.ReportMetric(100*events/ours.Seconds()/pipelined, "%-of-pipelined")
		})
	}
}

func repeat(lines [][]byte, n int) [][]byte {
	all := make([][]byte, 0, n*len(lines))
	for range n {
		all = append(all, lines...)
	}
	return all
}

// runTurns times agents×turns scripted turns until flushed and returns the
// time and the encoded event lines of the first agent's log.
func runTurns(b *testing.B, agents, turns int) (time.Duration, [][]byte) {
	b.Helper()
	ctx := context.Background()
	rt := mustOpen(b, Options{Root: b.TempDir()})
	handles := make([]*parent.Handle, agents)
	for i := range handles {
		handles[i] = mustStart(b, rt, parent.CreateSpec{})
	}
	content := agent.Text("reply the quick brown fox jumps over the lazy dog")
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, h := range handles {
		wg.Go(func() {
			for range turns {
				if _, err := h.Followup(ctx, content, agent.Source{Kind: "user"}); err != nil {
					b.Error(err)
					return
				}
			}
			_ = h.WhenIdle(ctx)
			if _, err := rt.Sessions().Flush(ctx, h.Session()); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	var lines [][]byte
	for _, e := range handles[0].Session().Events() {
		line, err := json.Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		lines = append(lines, append(line, '\n'))
	}
	return elapsed, lines
}

// rawAppend times writing lines to each of files files by writers
// goroutines per file (which share the lines) through a group-committing
// appender, until every line is durable. With wait, every append returns
// only once its batch is durable.
func rawAppend(b *testing.B, files, writers int, lines [][]byte, wait bool) time.Duration {
	b.Helper()
	dir := b.TempDir()
	logs := make([]*rawLog, files)
	for i := range logs {
		logs[i] = openRaw(b, filepath.Join(dir, fmt.Sprintf("%d.jsonl", i)))
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, l := range logs {
		var share sync.WaitGroup
		for w := range writers {
			share.Go(func() {
				for i := w; i < len(lines); i += writers {
					l.append(lines[i], wait)
				}
			})
		}
		wg.Go(func() {
			share.Wait()
			l.close()
		})
	}
	wg.Wait()
	return time.Since(start)
}

// rawLog is the simplest group commit: appenders add to a buffer, one
// writer goroutine writes whatever is pending and fdatasyncs once per
// batch, then releases the appenders waiting on that batch.
type rawLog struct {
	f       *os.File
	mu      sync.Mutex
	pending []byte
	synced  chan struct{} // closed when the pending batch is durable
	closed  bool
	wake    chan struct{}
	done    chan struct{}
}

func openRaw(b *testing.B, path string) *rawLog {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	l := &rawLog{f: f, synced: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go l.write()
	return l
}

func (l *rawLog) append(line []byte, wait bool) {
	l.mu.Lock()
	l.pending = append(l.pending, line...)
	synced := l.synced
	l.mu.Unlock()
	l.poke()
	if wait {
		<-synced
	}
}

func (l *rawLog) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// close waits until everything appended is durable.
func (l *rawLog) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.poke()
	<-l.done
	_ = l.f.Close()
}

func (l *rawLog) write() {
	defer close(l.done)
	var batch []byte
	for range l.wake {
		l.mu.Lock()
		batch, l.pending = l.pending, batch[:0]
		synced := l.synced
		l.synced = make(chan struct{})
		closed := l.closed && len(batch) == 0
		l.mu.Unlock()
		if len(batch) > 0 {
			_, _ = l.f.Write(batch)
			_ = syscall.Fdatasync(int(l.f.Fd()))
			l.poke() // appends that came in meanwhile form the next batch
		}
		close(synced)
		if closed {
			return
		}
	}
}

// liveBytes is the heap plus stack in use after a full collection.
func liveBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// BenchmarkIdleAgentBytes creates -bench.idle-agents idle live agents
// (memory-only sessions) and reports (heap+stack delta)/count, with and
// without the cost of their live sessions, which it measures separately in
// the same run by creating as many bare live sessions.
func BenchmarkIdleAgentBytes(b *testing.B) {
	ctx := context.Background()
	n := *idleAgents
	for range b.N {
		sessions := session.NewSessions(nil)
		before := liveBytes()
		lives := make([]*session.Live, n)
		for i := range lives {
			live, err := sessions.Create(ctx, session.Header{ID: fmt.Sprintf("bare-%d", i)}, nil)
			if err != nil {
				b.Fatal(err)
			}
			lives[i] = live
		}
		perSession := float64(liveBytes()-before) / float64(n)
		runtime.KeepAlive(lives)
		lives, sessions = nil, nil

		rt := mustOpen(b, Options{})
		before = liveBytes()
		for i := range n {
			mustStart(b, rt, parent.CreateSpec{Header: session.Header{ID: fmt.Sprintf("idle-%d", i)}})
		}
		perAgent := float64(liveBytes()-before) / float64(n)
		b.ReportMetric(perAgent, "B/agent")
		b.ReportMetric(perAgent-perSession, "B/agent-excl-session")
		b.ReportMetric(perSession, "B/session")
		if err := rt.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpawnDispose measures, interleaved, starting and disposing one
// agent (memory-only session) against spawning and stopping one bare
// protoactor actor (waiting for its termination).
func BenchmarkSpawnDispose(b *testing.B) {
	ctx := context.Background()
	rt := mustOpen(b, Options{})
	system := actor.NewActorSystem(actor.WithLoggerFactory(activation.LoggerFactory(nil)))
	defer system.Shutdown()
	props := actor.PropsFromProducer(func() actor.Actor { return echo{} })
	var ours, bare timer
	b.ResetTimer()
	for range b.N {
		ours.time(func() {
			h, err := rt.StartAgent(ctx, parent.CreateSpec{})
			if err != nil {
				b.Fatal(err)
			}
			if err := h.Dispose(ctx); err != nil {
				b.Fatal(err)
			}
		})
		bare.time(func() {
			pid := system.Root.Spawn(props)
			if err := system.Root.StopFuture(pid).Wait(); err != nil {
				b.Fatal(err)
			}
		})
	}
	b.StopTimer()
	b.ReportMetric(ours.ns(), "ns/agent-spawn+dispose")
	b.ReportMetric(bare.ns(), "ns/actor-spawn+stop")
	b.ReportMetric(ours.ns()/bare.ns(), "x-bare")
}
