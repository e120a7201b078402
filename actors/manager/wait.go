package manager

import (
	"context"

	"github.com/dsh-actors/dsh-actors/internal/actorkit"
)

// WaitEpoch returns the end of continuable child childID's epoch with ok
// true, without polling:
//   - when an epoch of childID is resident, it blocks until that epoch
//     ends (its disposal settled and its subagent/end was delivered) and
//     returns its end; an epoch rolled back before it started gives ok
//     false;
//   - else, when an epoch of childID ended in this runtime, it returns the
//     most recent one's end at once (after its subagent/end was
//     delivered), even if that epoch ended before the call;
//   - else ok is false at once: no epoch of childID ended here, or its
//     parent was disposed since. An ended epoch's end is kept only while
//     an agent with the child's parent id is live in this runtime (one
//     that could send to it again): the parent's disposal drops it, and an
//     epoch that outlived its parent is not kept.
//
// A caller whose ctx ends first gets CANCELLED wrapping ctx's error; after
// the runtime's shutdown began, the closed error.
func (m *Manager) WaitEpoch(ctx context.Context, childID string) (end RunEndInfo, ok bool, err error) {
	if err := m.refusal(ctx); err != nil {
		return end, false, err
	}
	if !m.ops.enter() {
		return end, false, draining()
	}
	defer m.ops.leave()
	registered := make(chan chan RunEndInfo, 1)
	m.send(waitEpochRequest{childID, registered})
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

// watchEpoch registers a waiter on childID's resident epoch; when none is
// resident it hands over the remembered end on the lifecycle goroutine,
// after the subagent/end already queued there; with neither it returns nil
// (inside the actor).
func (m *core) watchEpoch(childID string) chan RunEndInfo {
	w := make(chan RunEndInfo, 1)
	if a := m.st.activations[childID]; a != nil && !a.gone {
		a.waiters = append(a.waiters, w)
		return w
	}
	end, ok := m.st.ends[childID]
	if !ok {
		return nil
	}
	m.emit(handOver{w, end})
	return w
}

// remember keeps end as its child's latest for WaitEpoch, replacing the
// previous one, while an agent with the child's parent id is live here
// (inside the actor). The parent's id is counted (once, with its first
// remembered child) before its liveness is read, so a disposal after the
// read reaches parentDisposed.
func (m *core) remember(end RunEndInfo) {
	m.forgetEnd(end.ID)
	children := m.st.endsOf[end.ParentID]
	if children == nil {
		children = map[string]struct{}{}
		m.st.endsOf[end.ParentID] = children
		m.endParents.added(end.ParentID)
	}
	m.st.ends[end.ID] = end
	children[end.ID] = struct{}{}
	if m.env.liveAgent(end.ParentID) == nil {
		m.forgetEnd(end.ID)
	}
}

// parentDisposed drops the remembered ends of parentID's children unless
// an agent with that id is live again (inside the actor).
func (m *core) parentDisposed(parentID string) {
	if m.env.liveAgent(parentID) != nil {
		return
	}
	for id := range m.st.endsOf[parentID] {
		m.forgetEnd(id)
	}
}

// forgetEnd drops childID's remembered end (inside the actor).
func (m *core) forgetEnd(childID string) {
	if end, ok := m.st.ends[childID]; ok {
		delete(m.st.ends, childID)
		children := m.st.endsOf[end.ParentID]
		delete(children, childID)
		if len(children) == 0 {
			delete(m.st.endsOf, end.ParentID)
			m.endParents.gone(end.ParentID)
		}
	}
}
