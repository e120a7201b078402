package bench

import (
	"context"
	"fmt"
	"runtime"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/session"
)

// SpawnResult holds the interleaved samples of Spawn.
type SpawnResult struct {
	// Agent: StartAgent (memory-only session) and Dispose of one agent.
	Agent Samples
	// Actor: Spawn and StopFuture(...).Wait of one bare protoactor actor.
	Actor Samples
}

// Spawn measures n rounds, interleaved: starting and disposing one agent
// of a memory-only runtime, and spawning and stopping (awaiting its
// termination) one bare protoactor actor.
func Spawn(ctx context.Context, n int) (res SpawnResult, err error) {
	rt, err := actors.New(actors.Options{})
	if err != nil {
		return res, err
	}
	defer closeRuntime(ctx, rt, &err)
	system := QuietSystem()
	defer system.Shutdown()
	props := EchoProps()
	var oerr error
	for i := range n + min(n, 100) { // the first rounds warm up
		if i%256 == 0 && ctx.Err() != nil {
			return res, ctx.Err()
		}
		var r SpawnResult
		r.Agent.Time(func() {
			var h *parent.Handle
			if h, oerr = rt.StartAgent(ctx, parent.CreateSpec{}); oerr == nil {
				oerr = h.Dispose(ctx)
			}
		})
		if oerr != nil {
			return res, oerr
		}
		r.Actor.Time(func() { oerr = system.Root.StopFuture(system.Root.Spawn(props)).Wait() })
		if oerr != nil {
			return res, oerr
		}
		if i >= min(n, 100) {
			res.Agent = append(res.Agent, r.Agent...)
			res.Actor = append(res.Actor, r.Actor...)
		}
	}
	return res, nil
}

// IdleResult is what Idle measured, in bytes per item.
type IdleResult struct {
	N int
	// Agent: heap+stack delta per idle live agent (memory-only session,
	// header only), everything the runtime holds for it.
	Agent float64
	// Session: the same per bare live session (session.Sessions.Create),
	// the part of Agent that is the session itself.
	Session float64
	// Actor: the same per idle bare protoactor actor.
	Actor float64
}

// Idle creates n idle live agents on a memory-only runtime, n bare live
// sessions and n idle bare protoactor actors, and measures heap plus stack
// after a full collection, before and after each, per item.
func Idle(ctx context.Context, n int) (res IdleResult, err error) {
	res.N = n
	// Bare live sessions.
	sessions := session.NewSessions(nil)
	before := LiveBytes()
	lives := make([]*session.Live, n)
	for i := range lives {
		if lives[i], err = sessions.Create(ctx, session.Header{ID: fmt.Sprintf("bare-%d", i)}, nil); err != nil {
			return res, err
		}
	}
	res.Session = perCount(before, LiveBytes(), n)
	runtime.KeepAlive(lives)

	// Bare protoactor actors.
	system := QuietSystem()
	props := EchoProps()
	pids := make([]*actor.PID, n)
	before = LiveBytes()
	for i := range pids {
		pids[i] = system.Root.Spawn(props)
	}
	res.Actor = perCount(before, LiveBytes(), n)
	for _, pid := range pids {
		system.Root.Stop(pid)
	}
	system.Shutdown()

	// Agents.
	rt, err := actors.New(actors.Options{})
	if err != nil {
		return res, err
	}
	defer closeRuntime(ctx, rt, &err)
	before = LiveBytes()
	for i := range n {
		if i%1024 == 0 && ctx.Err() != nil {
			return res, ctx.Err()
		}
		if _, err := rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: fmt.Sprintf("idle-%d", i)}}); err != nil {
			return res, err
		}
	}
	res.Agent = perCount(before, LiveBytes(), n)
	return res, nil
}

// agentsRow is row 3.
func agentsRow(ctx context.Context, cfg Config) ([]Line, error) {
	sp, err := Spawn(ctx, cfg.SpawnRounds)
	if err != nil {
		return nil, err
	}
	a, err := Compare("3a", "agent start+dispose (memory session)", Ns("start+dispose", sp.Agent.Median()),
		Ns("protoactor spawn+stop", sp.Actor.Median()), OursOverBase, nil)
	if err != nil {
		return nil, err
	}
	a.Note = fmt.Sprintf("medians of %d interleaved rounds; means %s vs %s", len(sp.Agent), FormatNs(sp.Agent.Mean()), FormatNs(sp.Actor.Mean()))
	idle, err := Idle(ctx, cfg.IdleAgents)
	if err != nil {
		return nil, err
	}
	b, err := Compare("3b", fmt.Sprintf("bytes per idle live agent (N=%d)", idle.N), Bytes("agent", idle.Agent),
		Bytes("protoactor idle actor", idle.Actor), OursOverBase, &Target{Op: AtMost, Value: 4096, OnOurs: true})
	if err != nil {
		return nil, err
	}
	b.Note = fmt.Sprintf("heap+stack delta / N after GC; of the agent's %s, the live session (header only, no events) is %s, so %s excluding it",
		FormatBytes(idle.Agent), FormatBytes(idle.Session), FormatBytes(idle.Agent-idle.Session))
	return []Line{a, b}, nil
}
