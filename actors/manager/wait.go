package manager

import (
	"context"
	"maps"

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
	rec := m.st.ends[childID]
	if rec == nil {
		return nil
	}
	m.emit(handOver{w, rec.RunEndInfo})
	return w
}

// endRecord is a remembered end and its place in its parent's family.
type endRecord struct {
	RunEndInfo
	family *endFamily
	at     int // the child's index in family.ids
}

// endFamily is the children of one parent id whose ends are remembered.
type endFamily struct{ ids []string }

// reserveEnds makes room in the ends map for n more ends, so that a
// drain remembering its targets' ends one by one never grows it (inside
// the actor). The room doubles when it runs out.
func (s *state) reserveEnds(n int) {
	need := len(s.ends) + n
	if need <= s.endsRoom {
		return
	}
	s.endsRoom = 2 * need
	ends := make(map[string]*endRecord, s.endsRoom)
	maps.Copy(ends, s.ends)
	s.ends = ends
}

// remember keeps rec as its child's latest end for WaitEpoch, replacing
// the previous one, while an agent with the child's parent id is live
// here (inside the actor). The parent's id is counted (once, with its
// first remembered child) before its liveness is read, so a disposal
// after the read reaches parentDisposed. A child owned by its parent's
// Activation (owned) was released before it: the parent's own release
// reads that liveness later (forget), so it is not read here.
func (m *core) remember(rec *endRecord, owned bool) {
	id, parentID := rec.ID, rec.ParentID
	if old := m.st.ends[id]; old != nil && old.ParentID == parentID {
		rec.family, rec.at = old.family, old.at
	} else {
		if old != nil {
			m.forgetEnd(id)
		}
		rec.family = m.familyOf(parentID)
		rec.at = len(rec.family.ids)
		rec.family.ids = append(rec.family.ids, id)
	}
	m.st.ends[id] = rec
	if !owned && m.env.liveAgent(parentID) == nil {
		m.forgetEnd(id)
	}
}

// familyOf is the family of parentID's remembered children, created (and
// its id counted) when it has none.
func (m *core) familyOf(parentID string) *endFamily {
	f := m.st.endsOf[parentID]
	if f == nil {
		f = &endFamily{}
		m.st.endsOf[parentID] = f
		m.endParents.added(parentID)
	}
	return f
}

// parentDisposed drops the remembered ends of parentID's children unless
// an agent with that id is live again (inside the actor).
func (m *core) parentDisposed(parentID string) {
	f := m.st.endsOf[parentID]
	if f == nil || m.env.liveAgent(parentID) != nil {
		return
	}
	for _, id := range f.ids {
		delete(m.st.ends, id)
	}
	m.dropFamily(parentID)
}

// forgetEnd drops childID's remembered end (inside the actor): the last
// of its family takes its place there.
func (m *core) forgetEnd(childID string) {
	rec := m.st.ends[childID]
	if rec == nil {
		return
	}
	delete(m.st.ends, childID)
	f := rec.family
	last := len(f.ids) - 1
	if moved := f.ids[last]; rec.at < last {
		f.ids[rec.at] = moved
		m.st.ends[moved].at = rec.at
	}
	f.ids = f.ids[:last]
	if last == 0 {
		m.dropFamily(rec.ParentID)
	}
}

// dropFamily forgets parentID's family, which remembers no end any more.
func (m *core) dropFamily(parentID string) {
	delete(m.st.endsOf, parentID)
	m.endParents.gone(parentID)
}
