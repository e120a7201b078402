package dsh

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/dsh-actors/dsh-actors/session"
)

// sweeper sweeps a shared store once per lease TTL until stop: each sweep
// takes over the sessions whose holder died or stalls past its lease (the
// turn it left open closed interrupted, the holder fenced) and wakes the
// sessions with pending messages that no one holds live, which this
// runtime's manager then resumes and runs. So a message acknowledged for
// a child of a dead process runs without a later Send.
type sweeper struct {
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// startSweeper starts sweeping store every interval, logging a failed
// sweep to logger; nil when the store cannot sweep (a JSONL folder or
// memory, which no other process shares).
func startSweeper(store session.Store, interval time.Duration, logger *slog.Logger) *sweeper {
	sw, ok := store.(session.Sweeper)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &sweeper{cancel: cancel}
	s.done.Go(func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				sweepOnce(ctx, sw, interval, logger)
			}
		}
	})
	return s
}

// sweepOnce runs one sweep, bounded by interval and by ctx.
func sweepOnce(ctx context.Context, sw session.Sweeper, interval time.Duration, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, interval)
	defer cancel()
	if _, err := sw.Sweep(ctx); err != nil && ctx.Err() == nil {
		logger.Warn("dsh: sweep of the shared store failed", "err", err)
	}
}

// stop ends the sweeps, cancelling the one running, and waits for it; a
// nil sweeper has nothing to stop. It is idempotent.
func (s *sweeper) stop() {
	if s == nil {
		return
	}
	s.cancel()
	s.done.Wait()
}
