package actors_test

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/bench"
	"github.com/dsh-actors/dsh-actors/session"
)

// The benchmarks are an external test package so that they can share
// internal/bench's baselines (which imports actors).

var idleAgents = flag.Int("bench.idle-agents", 100_000, "live agents BenchmarkIdleAgentBytes creates")

// noop is an agent whose turns do nothing.
var noop = agent.Func(func(context.Context, agent.Host, event.UserMessage) (agent.StopReason, error) {
	return agent.Completed, nil
})

func mustOpen(b *testing.B, opts actors.Options) *actors.Runtime {
	b.Helper()
	rt, err := actors.New(opts)
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

func mustStart(b *testing.B, rt *actors.Runtime, spec parent.CreateSpec) *parent.Handle {
	b.Helper()
	h, err := rt.StartAgent(context.Background(), spec)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkFollowupAdmission measures, interleaved in one run, the round
// trip until the caller holds the MessageID of a follow-up to an idle agent
// (pooled and default dispatcher), a raw channel request/reply, and a bare
// protoactor RequestFuture; and the full turn round trip (follow-up to
// turn/end) with both dispatchers. The agent is idle before every timed
// follow-up (the wait is not timed).
func BenchmarkFollowupAdmission(b *testing.B) {
	ctx := context.Background()
	pooled := mustOpen(b, actors.Options{Workers: 2})
	plain := mustOpen(b, actors.WithDispatcher(actors.Options{}, actor.NewDefaultDispatcher(300)))
	hp := mustStart(b, pooled, parent.CreateSpec{Spec: parent.Spec{Agent: noop}})
	hd := mustStart(b, plain, parent.CreateSpec{Spec: parent.Spec{Agent: noop}})
	requests, replies := make(chan int), make(chan int)
	go func() {
		for r := range requests {
			replies <- r
		}
	}()
	defer close(requests)
	system := bench.QuietSystem()
	defer system.Shutdown()
	pid := system.Root.Spawn(bench.EchoProps())
	defer system.Root.Stop(pid)

	var admitPool, admitDefault, channel, future, turnPool, turnDefault bench.Samples
	content := event.Text("x")
	src := event.Source{Kind: "user"}
	b.ResetTimer()
	for range b.N {
		admitPool.Time(func() { _, _ = pooled.Followup(ctx, hp.ID(), content, src) })
		_ = hp.Activation().WhenIdle(ctx)
		admitDefault.Time(func() { _, _ = plain.Followup(ctx, hd.ID(), content, src) })
		_ = hd.Activation().WhenIdle(ctx)
		channel.Time(func() { requests <- 1; <-replies })
		future.Time(func() { _, _ = system.Root.RequestFuture(pid, "x", time.Second).Result() })
		turnPool.Time(func() { _, _ = hp.Followup(ctx, content, src); _ = hp.Activation().WhenIdle(ctx) })
		turnDefault.Time(func() { _, _ = hd.Followup(ctx, content, src); _ = hd.Activation().WhenIdle(ctx) })
	}
	b.StopTimer()
	b.ReportMetric(admitPool.Mean(), "ns/followup")
	b.ReportMetric(admitDefault.Mean(), "ns/followup-default-dispatcher")
	b.ReportMetric(channel.Mean(), "ns/chan-rt")
	b.ReportMetric(future.Mean(), "ns/future-rt")
	b.ReportMetric(admitPool.Mean()/channel.Mean(), "x-chan")
	b.ReportMetric(future.Mean()/admitPool.Mean(), "future/followup")
	b.ReportMetric(turnPool.Mean(), "ns/turn-rt")
	b.ReportMetric(turnDefault.Mean(), "ns/turn-rt-default-dispatcher")
}

// BenchmarkTurnThroughput runs b.N scripted `reply` turns (one agent, then
// 100 agents in parallel, b.N/100 turns each) with every event logged to a
// JSONL store (write-behind group commit), until everything is durable.
// In the same run it measures two raw ceilings with lines of the same
// sizes: the group-commit append rate (64 writers, each waiting until its
// line is durable; one write and one fdatasync per batch — the rate
// the design measured) and a pipelined appender (one producer that never
// waits, one file per agent). It reports events/s of each and our
// percentage of both.
func BenchmarkTurnThroughput(b *testing.B) {
	for _, agents := range []int{1, 100} {
		b.Run(fmt.Sprintf("agents=%d", agents), func(b *testing.B) {
			turns := max(b.N/agents, 1)
			res, err := bench.Turns(context.Background(), b.TempDir(), agents, turns)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			ours, lines := res.Elapsed, res.Lines
			events := float64(agents * len(lines))
			raw, err := bench.RawAppend(b.TempDir(), 64, repeat(lines, agents))
			if err != nil {
				b.Fatal(err)
			}
			groupCommit := events / raw.Seconds()
			if raw, err = bench.RawPipelined(b.TempDir(), agents, lines); err != nil {
				b.Fatal(err)
			}
			pipelined := events / raw.Seconds()
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

// BenchmarkIdleAgentBytes creates -bench.idle-agents idle live agents
// (memory-only sessions) and reports (heap+stack delta)/count, with and
// without the cost of their live sessions, which it measures separately in
// the same run by creating as many bare live sessions.
func BenchmarkIdleAgentBytes(b *testing.B) {
	ctx := context.Background()
	n := *idleAgents
	for range b.N {
		sessions := session.NewSessions(nil)
		before := bench.LiveBytes()
		lives := make([]*session.Live, n)
		for i := range lives {
			live, err := sessions.Create(ctx, session.Header{ID: fmt.Sprintf("bare-%d", i)}, nil)
			if err != nil {
				b.Fatal(err)
			}
			lives[i] = live
		}
		perSession := float64(bench.LiveBytes()-before) / float64(n)
		runtime.KeepAlive(lives)
		lives, sessions = nil, nil

		rt := mustOpen(b, actors.Options{})
		before = bench.LiveBytes()
		for i := range n {
			mustStart(b, rt, parent.CreateSpec{Header: session.Header{ID: fmt.Sprintf("idle-%d", i)}})
		}
		perAgent := float64(bench.LiveBytes()-before) / float64(n)
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
	rt := mustOpen(b, actors.Options{})
	system := bench.QuietSystem()
	defer system.Shutdown()
	props := bench.EchoProps()
	var ours, bare bench.Samples
	b.ResetTimer()
	for range b.N {
		ours.Time(func() {
			h, err := rt.StartAgent(ctx, parent.CreateSpec{})
			if err != nil {
				b.Fatal(err)
			}
			if err := h.Dispose(ctx); err != nil {
				b.Fatal(err)
			}
		})
		bare.Time(func() {
			pid := system.Root.Spawn(props)
			if err := system.Root.StopFuture(pid).Wait(); err != nil {
				b.Fatal(err)
			}
		})
	}
	b.StopTimer()
	b.ReportMetric(ours.Mean(), "ns/agent-spawn+dispose")
	b.ReportMetric(bare.Mean(), "ns/actor-spawn+stop")
	b.ReportMetric(ours.Mean()/bare.Mean(), "x-bare")
}
