package bench

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	dsh "github.com/dsh-actors/dsh-actors"
)

// IdleResult is what Idle measured, in bytes per item.
type IdleResult struct {
	N int
	// Agent: heap+stack delta per idle live agent (memory-only session,
	// header only), everything the runtime holds for it.
	Agent float64
	// Actor: the same per idle bare protoactor actor.
	Actor float64
}

// Idle creates n idle bare protoactor actors, then n idle live top-level
// agents on a memory-only runtime opened with dsh.Open, and measures heap
// plus stack after a full collection, before and after each, per item.
func Idle(ctx context.Context, n int) (res IdleResult, err error) {
	res.N = n
	system := QuietSystem()
	props := EchoProps()
	pids := make([]*actor.PID, n)
	before := LiveBytes()
	for i := range pids {
		pids[i] = system.Root.Spawn(props)
	}
	res.Actor = perCount(before, LiveBytes(), n)
	for _, pid := range pids {
		system.Root.Stop(pid)
	}
	system.Shutdown()

	rt, err := dsh.Open(dsh.Options{})
	if err != nil {
		return res, err
	}
	defer closeRuntime(rt, &err)
	before = LiveBytes()
	for i := range n {
		if i%1024 == 0 && ctx.Err() != nil {
			return res, ctx.Err()
		}
		if _, err := rt.StartAgent(ctx, fmt.Sprintf("idle-%d", i)); err != nil {
			return res, err
		}
	}
	res.Agent = perCount(before, LiveBytes(), n)
	return res, nil
}

// agentsRow is row 3: bytes per idle live agent. Starting and disposing
// one agent against a bare protoactor spawn+stop takes the runtime's
// internals (a top-level agent is disposed only with its runtime), so it
// is the `go test -bench SpawnDispose ./actors` benchmark.
func agentsRow(ctx context.Context, cfg Config) ([]Line, error) {
	idle, err := Idle(ctx, cfg.IdleAgents)
	if err != nil {
		return nil, err
	}
	b, err := Compare("3b", fmt.Sprintf("bytes per idle live agent (N=%d)", idle.N), Bytes("agent", idle.Agent),
		Bytes("protoactor idle actor", idle.Actor), OursOverBase, &Target{Op: AtMost, Value: 4096, OnOurs: true})
	if err != nil {
		return nil, err
	}
	b.Note = "heap+stack delta / N after GC; the share of its live session: go test -bench IdleAgentBytes ./actors; agent start+dispose (3a): go test -bench SpawnDispose ./actors"
	return []Line{b}, nil
}
