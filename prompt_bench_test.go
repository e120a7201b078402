package dsh

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
)

// BenchmarkPromptSession is the go test twin of dsh-actors bench row 1a:
// a prompt through PromptSession to an idle top-level agent of a
// memory-only runtime until the caller holds the MessageID. Interleaved in
// the same run it times the actors-level path to the same agent (its
// parent.Handle's Followup, what the root adds nothing to) and a raw
// channel request/reply; the agent's turn runs between rounds, untimed.
// It reports the medians and their ratios; -cpuprofile and -memprofile
// of the "prompt" sub-benchmark profile the root's path alone.
func BenchmarkPromptSession(b *testing.B) {
	ctx := context.Background()
	rt, err := Open(Options{NewAgent: func(agent.Options) agent.Agent {
		return agent.Func(func(context.Context, agent.Host, event.UserMessage) (agent.StopReason, error) {
			return agent.Completed, nil
		})
	}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := rt.Close(); err != nil {
			b.Error(err)
		}
	})
	h, err := rt.StartAgent(ctx, "admission")
	if err != nil {
		b.Fatal(err)
	}
	content, src := event.Text("x"), event.Source{Kind: "user"}
	prompt := func(b *testing.B) {
		if _, err := rt.PromptSession(ctx, h.ID(), content, src); err != nil {
			b.Fatal(err)
		}
	}
	idle := func(b *testing.B) {
		if err := h.WhenIdle(ctx); err != nil {
			b.Fatal(err)
		}
	}

	b.Run("prompt", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			prompt(b)
			b.StopTimer()
			idle(b)
			b.StartTimer()
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		requests, replies := make(chan int), make(chan int)
		go func() {
			for r := range requests {
				replies <- r
			}
		}()
		defer close(requests)
		var root, handle, channel []time.Duration
		timed := func(s *[]time.Duration, op func()) {
			start := time.Now()
			op()
			*s = append(*s, time.Since(start))
		}
		for b.Loop() {
			timed(&root, func() { prompt(b) })
			idle(b)
			timed(&handle, func() {
				if _, err := h.h.Followup(ctx, content, src); err != nil {
					b.Fatal(err)
				}
			})
			idle(b)
			timed(&channel, func() { requests <- 1; <-replies })
		}
		r, a, c := median(root), median(handle), median(channel)
		b.ReportMetric(r, "ns/prompt")
		b.ReportMetric(a, "ns/handle-followup")
		b.ReportMetric(c, "ns/chan-rt")
		b.ReportMetric(r/c, "prompt/chan")
		b.ReportMetric(a/c, "handle/chan")
	})
}

// median is the middle of s in nanoseconds (0 when empty).
func median(s []time.Duration) float64 {
	if len(s) == 0 {
		return 0
	}
	sorted := slices.Clone(s)
	slices.Sort(sorted)
	return float64(sorted[len(sorted)/2].Nanoseconds())
}
