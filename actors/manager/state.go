package manager

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
)

// state is everything the actor owns. Nothing else reads or writes it.
type state struct {
	activations      map[string]*activation
	materializations map[*materialization]struct{}
	locks            map[string]*childLock
	scopes           map[*parent.Handle]*scope
	// elsewhere are the children last found held by another process: a
	// follow-up goes straight to their durable inbox (a hint only: if no
	// one holds the child any more, the admission's wake resumes it).
	elsewhere map[string]bool
	draining  bool
	epochs    uint64 // materialization counter: creation order
	// parked are, by parent id, the materializations waiting for the
	// parent's own epoch, live already but being built, to be installed
	// (materialize).
	parked map[string][]*op
	// ends are the ends of each child's most recent epoch that ended in
	// this runtime, for WaitEpoch: kept while an agent with the child's
	// parent id is live here (see remember).
	ends map[string]*endRecord
	// endsOf lists ends by parent id, so a parent's disposal drops its
	// children's ends without reading the others.
	endsOf map[string]*endFamily
	// endsRoom is how many ends the ends map was last sized for
	// (reserveEnds).
	endsRoom int
}

func newState() *state {
	return &state{
		activations:      map[string]*activation{},
		materializations: map[*materialization]struct{}{},
		locks:            map[string]*childLock{},
		scopes:           map[*parent.Handle]*scope{},
		elsewhere:        map[string]bool{},
		parked:           map[string][]*op{},
		ends:             map[string]*endRecord{},
		endsOf:           map[string]*endFamily{},
	}
}

// activation is one resident epoch of a continuable child.
type activation struct {
	childID  string
	provider string
	handle   *parent.Handle
	order    uint64                   // creation order among epochs
	ancestry []*parent.Handle         // the child and its live lineage at materialization
	owner    *activation              // the parent's Activation that owns this child, if any
	owned    map[*activation]struct{} // the live children it owns (nil until the first)
	accepted map[string]bool
	enqueued map[string]bool // every message handed to the epoch's inbox
	disposal *disposal       // non-nil once teardown opened: the admission cut-off
	ending   disposal        // what disposal points to (openDisposal)
	run      RunInfo
	boundary int   // the epoch's first own event, taken at subagent/start
	failure  error // set when the child's actor stopped on its own
	// under is the parent whose actor this epoch's was spawned under
	// (materializeSpec.under), nil at the root.
	under *parent.Handle
	// rollback is the op whose failure rolls this unpublished epoch back;
	// rollingBack mirrors it for the release step, off the actor.
	rollback    *op
	rollingBack atomic.Bool
	// heldRelease is the outcome of a's release step, held until the
	// releases of the children a still owns reached the actor: a child's
	// always precedes its owner's (released).
	heldRelease *teardownOutcome
	settling    bool // the disposal was opened by settlement: log its failure
	edge        *edge
	// childFailures are the failures of the owned children released since
	// a's disposal opened (actor only); a's teardown reports them.
	childFailures []error
	// link is what a's agent tells the actor through (observeEpoch); it
	// lies next to disposing, which its calls read off the actor.
	link epochLink
	// disposing mirrors disposal != nil for the child's observer, which
	// runs off the actor: an idle status can no longer settle a.
	disposing atomic.Bool
	gone      bool // released: no longer in the manager's tables (actor only)
	// discarded counts accepted messages the epoch discarded unrun.
	discarded int
	// waiters get the epoch's end once it was emitted (WaitEpoch).
	waiters []chan RunEndInfo
}

// edge is the epoch's lifecycle state, touched only on the lifecycle
// goroutine (Manager.edges) so start and end are emitted in order.
type edge struct {
	startOK bool // subagent/start was emitted; end must pair it
}

// teardownOutcome is what a finished teardown hands to the release.
type teardownOutcome struct {
	failure error
	epoch   epochReport
}

// disposal is a memoized teardown; done closes once it settled.
type disposal struct {
	done chan struct{}
	err  error
}

// settle closes done (on the lifecycle goroutine, after the end edge).
func (d *disposal) settle() { close(d.done) }

// materialization is an admitted create or resume between its admission
// and its publication or rollback; drains wait for it.
type materialization struct {
	lineage []*parent.Handle
	done    chan struct{}
}

// scope is a scoped drain's cut-off: the exact root plus the members found
// below it.
type scope struct {
	members map[*parent.Handle]bool
}

// residency is derived, never stored.
type residency int

const (
	running residency = iota // a turn is open or accepted ids are unclaimed
	waiting                  // idle, owns undisposed children
	settled                  // idle, owns none
)

func (m *core) residency(a *activation) residency {
	switch {
	case m.env.running(a.handle) || len(a.accepted) > 0:
		return running
	case len(a.owned) > 0:
		return waiting
	default:
		return settled
	}
}

// closingTeardown returns the DRAINING error that applies to agent, or nil:
// the manager is draining, or agent is a member of a scoped cut-off, or a
// cut-off root is in agent's live lineage. A nil agent (a woken child's
// parent that is not live here) is under the manager-wide drain only.
func (m *core) closingTeardown(agent *parent.Handle) error {
	if m.st.draining {
		return draining()
	}
	if agent == nil || len(m.st.scopes) == 0 {
		return nil
	}
	lineage := m.env.liveLineage(agent)
	for root, sc := range m.st.scopes {
		if sc.members[agent] || slices.Contains(lineage, root) {
			return scopedDraining(m.env.idOf(root))
		}
	}
	return nil
}

// admit is the DRAINING gate (assertAdmitting).
func (m *core) admit(agent *parent.Handle) error {
	if err := m.env.closed(); err != nil {
		return err
	}
	return m.closingTeardown(agent)
}

// admitWithContext checks the caller's context, then the DRAINING gate.
func (m *core) admitWithContext(ctx context.Context, agent *parent.Handle) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return m.admit(agent)
}

// acquireOwnership records child in the parent's Activation (a top-level
// parent has none and stays outside the waiting graph): only the exact
// handle of a resident Activation, the parent's current epoch, can own
// a child. A parent whose disposal opened cannot take a new child:
// ACTIVATION_CLOSING.
func (m *core) acquireOwnership(p *parent.Handle, child *activation) error {
	owner := m.st.activations[m.env.idOf(p)]
	if owner == nil || owner.handle != p {
		return nil
	}
	if owner.disposal != nil {
		return parentClosing(owner.childID)
	}
	if child.under != p {
		return nil // not spawned under p's actor: the root of its own forest
	}
	if owner.owned == nil {
		owner.owned = map[*activation]struct{}{}
	}
	owner.owned[child] = struct{}{}
	child.owner = owner
	return nil
}

// stopActor stops a's actor on its own, not as part of its owner's stop,
// cancelling its subtree with cause. An owner's later stop waits for a's
// actor through its own family, sending it nothing, so a's release may
// reach the actor before a's actor has stopped.
func (m *core) stopActor(a *activation, cause string) {
	m.emit(stopEpoch{a, agent.CancelCause{Kind: cause}})
}

// releaseOwnership removes child, released with failure, from its owner
// and lets the owner settle, or continue its disposal child-first. It
// returns the owner when the owner's release, held for its children's,
// is due now (releaseHeld, once child's end was emitted).
func (m *core) releaseOwnership(child *activation, failure error) (due *activation) {
	owner := child.owner
	if owner == nil {
		return nil
	}
	child.owner = nil
	delete(owner.owned, child)
	m.childReleased(owner, failure)
	m.checkSettled(owner)
	if owner.heldRelease != nil && !m.ownsUnreleased(owner) {
		return owner
	}
	return nil
}

// ownsUnreleased reports whether a owns a child not released yet.
func (m *core) ownsUnreleased(a *activation) bool {
	for child := range a.owned {
		if !child.gone {
			return true
		}
	}
	return false
}

// releaseHeld takes the release of owner, held for its children's
// (released), once the last of them was released and its end emitted;
// nil is no owner.
func (m *core) releaseHeld(owner *activation) {
	if owner == nil {
		return
	}
	out := *owner.heldRelease
	owner.heldRelease = nil
	m.released(owner, out)
}
