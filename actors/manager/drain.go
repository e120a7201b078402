package manager

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
	"github.com/dsh-actors/dsh-actors/session"
)

// DrainContinuableDescendants closes admission below each exact live parent
// (stale handles are ignored and do not close their id's live agent), then
// disposes only the parents' strict continuable descendants, child-first:
// the cut-off is published before anything waits, every descendant's
// disposal (cancellation top-down) opens in the same step, admitted
// materializations below the parents are awaited (they roll back with
// DRAINING), and the call returns once every selected forest is released.
// The cut-off lasts until that exact parent leaves the registry; a parent
// that is itself a continuable child stays resident. Unrelated forests keep
// running. With a durable inbox the cut-off is also recorded in the
// store, before the wait, so other processes' admissions below the
// parents are refused too. A failed branch is still released; the
// failures are aggregated as ACTIVATION_TEARDOWN_FAILED. It blocks until
// done or ctx is done.
func (m *Manager) DrainContinuableDescendants(ctx context.Context, parents []*parent.Handle) error {
	if err := actorkit.Cancellation(ctx, ctx.Err()); err != nil {
		return err
	}
	if !m.ops.enter() {
		return nil
	}
	defer m.ops.leave()
	return actorkit.Cancellation(ctx, wait(ctx, m.beginScopedDrain(ctx, parents)))
}

// beginScopedDrain sends the scoped drain; its cut-off applies to every
// decision the actor takes after it.
func (m *Manager) beginScopedDrain(ctx context.Context, parents []*parent.Handle) <-chan error {
	result := make(chan error, 1)
	m.send(scopedDrainRequest{ctx, parents, result})
	return result
}

func wait(ctx context.Context, result <-chan error) error {
	select {
	case err := <-result:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drainScoped is the scoped drain inside the actor; result gets its
// outcome.
func (m *core) drainScoped(ctx context.Context, parents []*parent.Handle, result chan<- error) {
	roots := m.exactRoots(parents)
	if len(roots) == 0 {
		m.emit(answer{result, nil})
		return
	}
	for _, root := range roots {
		m.scopeOf(root).members[root] = true
	}
	targets := m.selectTargets(roots)
	m.st.reserveEnds(len(targets))
	tops := targetRoots(targets, roots)
	mats := m.selectMaterializations(roots)
	disposals := make([]*disposal, len(tops))
	for i, t := range tops {
		disposals[i] = m.dispose(t) // and, top-down, every target below it
	}
	m.emit(finishScopedDrain{ctx, roots, mats, disposals, result})
}

// finishScopedDrain is the waiting part of a scoped drain (off the
// actor): the cut-off recorded in the store, the materializations below
// the roots and the disposals awaited, then the sessions other processes
// held below them.
func (m *Manager) finishScopedDrain(e finishScopedDrain) {
	m.closeDurableAdmission(e.roots)
	for _, mat := range e.mats {
		<-mat.done
	}
	err := aggregate("scoped", waitAll(e.disposals))
	e.result <- errors.Join(err, m.awaitReleasedElsewhere(e.ctx, e.roots))
}

// awaitReleasedElsewhere waits, with a store whose inbox wakes other
// processes (session.Waker), until no session below each root holds a
// lease: the descendants other processes held, woken by the cut-off, are
// disposed there. It blocks until then or ctx is done.
func (m *Manager) awaitReleasedElsewhere(ctx context.Context, roots []*parent.Handle) error {
	waker, ok := m.inbox.(session.Waker)
	if !ok {
		return nil
	}
	for _, root := range roots {
		if err := waker.AwaitReleasedBelow(ctx, root.ID()); err != nil {
			return err
		}
	}
	return nil
}

// closeDurableAdmission records the cut-off below each root in the
// store's durable inbox, so that an admission from another process is
// refused with DRAINING as well (this process's are refused by the
// actor's cut-off already). A store that fails to record it is logged.
func (m *Manager) closeDurableAdmission(roots []*parent.Handle) {
	if m.inbox == nil {
		return
	}
	for _, root := range roots {
		epoch := root.Session().Epoch()
		if err := m.inbox.CloseAdmission(context.Background(), root.ID(), epoch); err != nil {
			m.logger.Warn("subagent: the drain's cut-off was not recorded in the durable inbox", "parent", root.ID(), "err", err)
		}
	}
}

// exactRoots keeps the parents that are the registry's exact live entry.
func (m *core) exactRoots(parents []*parent.Handle) []*parent.Handle {
	var roots []*parent.Handle
	for _, p := range parents {
		if p != nil && m.env.isLive(p) && !slices.Contains(roots, p) {
			roots = append(roots, p)
		}
	}
	return roots
}

// scopeOf returns root's cut-off, creating it.
func (m *core) scopeOf(root *parent.Handle) *scope {
	sc := m.st.scopes[root]
	if sc == nil {
		sc = &scope{members: map[*parent.Handle]bool{}}
		m.st.scopes[root] = sc
		m.roots.added(m.env.idOf(root))
	}
	return sc
}

// selectTargets returns the resident Activations that are strict
// descendants of a root (by the ancestry captured at
// materialization), adding each with its live lineage below the root to
// that root's cut-off. The lineage is read from the registry only where
// the owner is not a target itself (a target adds its own lineage).
func (m *core) selectTargets(roots []*parent.Handle) []*activation {
	scopes := make([]*scope, len(roots))
	for i, root := range roots {
		scopes[i] = m.st.scopes[root]
	}
	var targets []*activation
	for _, a := range m.st.activations {
		if slices.Contains(roots, a.handle) {
			continue
		}
		target := false
		for i, root := range roots {
			if !slices.Contains(a.ancestry, root) {
				continue
			}
			target = true
			if o := a.owner; o != nil && slices.Contains(o.ancestry, root) && !slices.Contains(roots, o.handle) {
				scopes[i].members[a.handle] = true // o is a target: it adds the rest
			} else {
				m.addMembers(root, m.env.liveLineage(a.handle))
			}
		}
		if target {
			targets = append(targets, a)
		}
	}
	return targets
}

// isTarget reports whether a (possibly nil) is a drain target: a strict
// descendant of one of roots.
func isTarget(a *activation, roots []*parent.Handle) bool {
	if a == nil || slices.Contains(roots, a.handle) {
		return false
	}
	for _, root := range roots {
		if slices.Contains(a.ancestry, root) {
			return true
		}
	}
	return false
}

// selectMaterializations returns the in-flight materializations below a
// root, adding their lineage below the root to its cut-off.
func (m *core) selectMaterializations(roots []*parent.Handle) []*materialization {
	var selected []*materialization
	for mat := range m.st.materializations {
		below := false
		for _, root := range roots {
			if slices.Contains(mat.lineage, root) {
				m.addMembers(root, mat.lineage)
				below = true
			}
		}
		if below {
			selected = append(selected, mat)
		}
	}
	return selected
}

// addMembers adds lineage up to (not including) root to root's cut-off.
// Agents above the root stay admitted: the cut-off closes admission below
// the root only (a deliberate choice; see the package doc).
func (m *core) addMembers(root *parent.Handle, lineage []*parent.Handle) {
	sc := m.st.scopes[root]
	for _, h := range lineage {
		if h == root {
			return
		}
		sc.members[h] = true
	}
}

// targetRoots are the targets no other target owns, in creation order.
// Every other target is owned, through targets, by one of them, so
// disposing them in this order disposes every target top-down.
func targetRoots(targets []*activation, roots []*parent.Handle) []*activation {
	var tops []*activation
	for _, t := range targets {
		if !isTarget(t.owner, roots) {
			tops = append(tops, t)
		}
	}
	inCreationOrder(tops)
	return tops
}

// inCreationOrder sorts acts by creation order. The orders are unique, so
// when they lie close together (a drain's targets, a forest's roots) each
// activation goes to its order's slot, read once, with no comparison;
// otherwise they are sorted. Comparing through the pointers cost a cache
// miss per read once 100,000 children no longer fit in the cache.
func inCreationOrder(acts []*activation) {
	if len(acts) < 2 {
		return
	}
	lo, hi := acts[0].order, acts[0].order
	for _, a := range acts {
		lo, hi = min(lo, a.order), max(hi, a.order)
	}
	if hi-lo >= uint64(4*len(acts)) {
		slices.SortFunc(acts, byCreationOrder)
		return
	}
	slots := make([]*activation, hi-lo+1)
	for _, a := range acts {
		slots[a.order-lo] = a
	}
	i := 0
	for _, a := range slots {
		if a != nil {
			acts[i] = a
			i++
		}
	}
}

// byCreationOrder compares x and y by creation order.
func byCreationOrder(x, y *activation) int { return cmp.Compare(x.order, y.order) }

// aggregate is nil, or ACTIVATION_TEARDOWN_FAILED over failures.
func aggregate(scope string, failures []error) error {
	if len(failures) == 0 {
		return nil
	}
	return teardownFailed(scope, failures)
}

// rootDisposed ends the cut-off of a scoped-drain root that left the
// registry.
func (m *core) rootDisposed(id string, incarnation uint64) {
	for root := range m.st.scopes {
		if m.env.idOf(root) == id && root.Incarnation() == incarnation {
			delete(m.st.scopes, root)
			m.roots.gone(id)
		}
	}
}

// drainAll is the manager-wide drain: admission closes for good, in-flight
// materializations are awaited, then every Activation forest is disposed
// from its root, in parallel; failures are aggregated.
func (m *Manager) drainAll(ctx context.Context) error {
	result := make(chan error, 1)
	m.send(drainAllRequest{result})
	return wait(ctx, result)
}

// closeAdmission is the manager-wide drain inside the actor: admission
// closes for good; once the materializations in flight published or
// rolled back (materializationsSettled), the forests are disposed.
func (m *core) closeAdmission(result chan<- error) {
	m.st.draining = true
	mats := make([]*materialization, 0, len(m.st.materializations))
	for mat := range m.st.materializations {
		mats = append(mats, mat)
	}
	m.emit(awaitMaterializations{mats, result})
}

// awaitMaterializations waits for mats (off the actor).
func (m *Manager) awaitMaterializations(mats []*materialization, result chan<- error) {
	for _, mat := range mats {
		<-mat.done
	}
	m.send(materializationsSettled{result})
}

// disposeForests disposes every Activation no other Activation owns;
// result gets the aggregate of their failures once all settled.
func (m *core) disposeForests(result chan<- error) {
	var roots []*activation
	for _, a := range m.st.activations {
		if a.owner == nil {
			roots = append(roots, a)
		}
	}
	inCreationOrder(roots)
	disposals := make([]*disposal, len(roots))
	for i, a := range roots {
		disposals[i] = m.dispose(a)
	}
	m.emit(awaitForests{disposals, result})
}

// awaitForests waits for the manager-wide drain's disposals and answers
// with their failures (off the actor).
func (m *Manager) awaitForests(e awaitForests) {
	e.result <- aggregate("", waitAll(e.disposals))
}
