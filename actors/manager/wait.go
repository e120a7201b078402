package manager

import (
	"context"

	"github.com/dsh-actors/dsh-actors/internal/actorkit"
)

// WaitEpoch blocks until the resident epoch of continuable child childID
// ends — its disposal settled and its subagent/end was delivered — and
// returns that end with ok true. When no epoch of childID is resident (it
// settled already, or never existed) it returns at once with ok false, as
// it does for an epoch rolled back before it started. A caller whose ctx
// ends first gets CANCELLED wrapping ctx's error; after the runtime's
// shutdown began, the closed error. It never polls.
func (m *Manager) WaitEpoch(ctx context.Context, childID string) (end RunEndInfo, ok bool, err error) {
	if err := m.refusal(ctx); err != nil {
		return end, false, err
	}
	if !m.ops.enter() {
		return end, false, draining()
	}
	defer m.ops.leave()
	registered := make(chan chan RunEndInfo, 1)
	m.post(func() { registered <- m.watchEpoch(childID) })
	var ended chan RunEndInfo
	select {
	case ended = <-registered:
	case <-ctx.Done():
		return end, false, actorkit.Cancellation(ctx, ctx.Err())
	}
	if ended == nil {
		return end, false, nil
	}
	select {
	case end, ok = <-ended:
		return end, ok, nil
	case <-ctx.Done():
		return end, false, actorkit.Cancellation(ctx, ctx.Err())
	}
}

// watchEpoch registers a waiter on childID's resident epoch, or returns
// nil when none is resident (inside the actor).
func (m *Manager) watchEpoch(childID string) chan RunEndInfo {
	a := m.st.activations[childID]
	if a == nil || a.gone {
		return nil
	}
	w := make(chan RunEndInfo, 1)
	a.waiters = append(a.waiters, w)
	return w
}
