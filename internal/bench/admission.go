package bench

import (
	"context"
	"fmt"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
)

// noop builds agents whose turns do nothing.
func noop(agent.Options) agent.Agent {
	return agent.Func(func(context.Context, agent.Host, event.UserMessage) (agent.StopReason, error) {
		return agent.Completed, nil
	})
}

// AdmissionResult holds the interleaved samples of Admission.
type AdmissionResult struct {
	// Followup: PromptSession to an idle top-level agent until the
	// caller holds the MessageID.
	Followup Samples
	// Channel: a raw channel request/reply.
	Channel Samples
	// Future: a bare protoactor RequestFuture round trip (default
	// dispatcher).
	Future Samples
}

// Admission measures n rounds, interleaved: a prompt (PromptSession) to
// an idle agent of a memory-only runtime opened with dsh.Open (its pooled
// dispatcher) until the MessageID is returned, a raw channel request/reply, and a bare protoactor
// RequestFuture. The agent's turn runs and ends between rounds, untimed, so
// the agent is idle before every timed follow-up. A few untimed rounds warm
// everything up first.
func Admission(ctx context.Context, n int) (res AdmissionResult, err error) {
	rt, err := dsh.Open(dsh.Options{NewAgent: noop})
	if err != nil {
		return res, err
	}
	defer closeRuntime(rt, &err)
	h, err := rt.StartAgent(ctx, "admission")
	if err != nil {
		return res, err
	}
	ch := NewChannel()
	defer ch.Close()
	system := QuietSystem()
	defer system.Shutdown()
	pid := system.Root.Spawn(EchoProps())
	defer func() { _ = system.Root.StopFuture(pid).Wait() }()

	content, src := event.Text("x"), event.Source{Kind: "user"}
	var ferr error
	round := func(r *AdmissionResult) error {
		r.Followup.Time(func() { _, ferr = rt.PromptSession(ctx, h.ID(), content, src) })
		if ferr != nil {
			return ferr
		}
		if err := h.WhenIdle(ctx); err != nil {
			return err
		}
		r.Channel.Time(func() { ch.RoundTrip() })
		r.Future.Time(func() { _, ferr = system.Root.RequestFuture(pid, "x", time.Second).Result() })
		return ferr
	}
	var warm AdmissionResult
	for range min(n, 200) {
		if err := round(&warm); err != nil {
			return res, err
		}
	}
	for i := range n {
		if i%256 == 0 && ctx.Err() != nil {
			return res, ctx.Err()
		}
		if err := round(&res); err != nil {
			return res, fmt.Errorf("admission round %d: %w", i, err)
		}
	}
	return res, nil
}

// admissionRow is row 1.
func admissionRow(ctx context.Context, cfg Config) ([]Line, error) {
	res, err := Admission(ctx, cfg.AdmissionRounds)
	if err != nil {
		return nil, err
	}
	ours := Ns("follow-up", res.Followup.Median())
	note := fmt.Sprintf("medians of %d interleaved rounds; means: follow-up %s, channel %s, RequestFuture %s",
		len(res.Followup), FormatNs(res.Followup.Mean()), FormatNs(res.Channel.Mean()), FormatNs(res.Future.Mean()))
	a, err := Compare("1a", "follow-up admission, idle agent → MessageID", ours,
		Ns("raw chan req/reply", res.Channel.Median()), OursOverBase, &Target{Op: AtMost, Value: 1.3})
	if err != nil {
		return nil, err
	}
	a.Note = note
	b, err := Compare("1b", "follow-up admission vs RequestFuture", ours,
		Ns("protoactor RequestFuture", res.Future.Median()), BaseOverOurs, &Target{Op: AtLeast, Value: 4})
	if err != nil {
		return nil, err
	}
	return []Line{a, b}, nil
}
