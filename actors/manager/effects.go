package manager

import (
	"context"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
)

// effect is something a step decided to do that the core cannot do
// itself: I/O, which runs off the actor and comes back as a message; a
// reply; a lifecycle edge; a call on a child's actor. The shell
// performs them in order, right after the step (perform).
type effect interface{ isEffect() }

// What a step asks for on behalf of an op.
type (
	// reply gives o its verdict.
	reply struct {
		o   *op
		out outcome
	}
	// prepareSeed runs the provider's preparation of a start (prepared).
	prepareSeed struct {
		o    *op
		plan startPlan
	}
	// loadLog runs a cold resume's repairing load (resumeLoaded).
	loadLog struct{ o *op }
	// openEpoch creates or resumes o.ms's epoch (opened).
	openEpoch struct{ o *op }
	// commitAdmission commits o.msg to the durable inbox of o's resident
	// epoch (admitted).
	commitAdmission struct{ o *op }
	// commitElsewhere commits o.msg to the durable inbox of a child
	// another process holds (admittedElsewhere).
	commitElsewhere struct{ o *op }
	// discardCommit marks o.msg, committed then refused, discarded in the
	// durable inbox (commitDiscarded).
	discardCommit struct {
		o       *op
		refusal error
	}
	// readPending reads the unclaimed messages of o's child (pendingRead).
	readPending struct{ o *op }
	// readDrained reads whether a drain in force closes o's child
	// (drainRead).
	readDrained struct{ o *op }
	// readOrphan reads whether o's child waits for a holder, and its log
	// (orphanRead).
	readOrphan struct{ o *op }
	// emitStart publishes o.a's subagent/start (startEmitted).
	emitStart struct{ o *op }
	// watchQueued watches the context of o, queued for its child's lock
	// (lockAbandoned); unwatchQueued stops that.
	watchQueued   struct{ o *op }
	unwatchQueued struct{ o *op }
	// awaitDisposal waits for d to settle, or for o's context to end when
	// cancellable (disposalSettled).
	awaitDisposal struct {
		o           *op
		d           *disposal
		cancellable bool
	}
)

// What a step asks for about a resident epoch.
type (
	// observeEpoch wires a freshly installed a to the manager: its inbox
	// events, its fence, its actor's stop and that stop's release step.
	observeEpoch struct{ a *activation }
	// forgetEpoch unwires a, released.
	forgetEpoch struct{ a *activation }
	// stopEpoch stops a's actor, and the actors under it, cancelling
	// their turns and queued messages with cause (its release step ends
	// in released).
	stopEpoch struct {
		a     *activation
		cause agent.CancelCause
	}
	// emitEnd publishes a's subagent/end (when its start was), then
	// settles d and hands the end to a's waiters.
	emitEnd struct {
		a   *activation
		end *RunEndInfo
	}
	// materializationEnded lets the drains waiting for mat go.
	materializationEnded struct{ mat *materialization }
	// settleRollback settles a's disposal after a rollback and tells its
	// waiters the epoch never started.
	settleRollback struct{ a *activation }
)

// What a step asks for about the calls that wait for the manager.
type (
	// watchRegistered answers a WaitEpoch with the channel its end comes
	// on (nil: none will).
	watchRegistered struct {
		reply chan<- chan RunEndInfo
		w     chan RunEndInfo
	}
	// handOver gives a remembered end to w, after the ends queued.
	handOver struct {
		w   chan RunEndInfo
		end RunEndInfo
	}
	// finishScopedDrain records a scoped drain's cut-off in the store,
	// waits for its materializations and disposals and answers result.
	finishScopedDrain struct {
		ctx       context.Context
		roots     []*parent.Handle
		mats      []*materialization
		disposals []*disposal
		result    chan<- error
	}
	// awaitMaterializations waits for mats (materializationsSettled).
	awaitMaterializations struct {
		mats   []*materialization
		result chan<- error
	}
	// awaitForests waits for the manager-wide drain's disposals and
	// answers result.
	awaitForests struct {
		disposals []*disposal
		result    chan<- error
	}
	// answer gives result err at once.
	answer struct {
		result chan<- error
		err    error
	}
)

func (reply) isEffect()                 {}
func (prepareSeed) isEffect()           {}
func (loadLog) isEffect()               {}
func (openEpoch) isEffect()             {}
func (commitAdmission) isEffect()       {}
func (commitElsewhere) isEffect()       {}
func (discardCommit) isEffect()         {}
func (readPending) isEffect()           {}
func (readDrained) isEffect()           {}
func (readOrphan) isEffect()            {}
func (emitStart) isEffect()             {}
func (watchQueued) isEffect()           {}
func (unwatchQueued) isEffect()         {}
func (awaitDisposal) isEffect()         {}
func (observeEpoch) isEffect()          {}
func (forgetEpoch) isEffect()           {}
func (stopEpoch) isEffect()             {}
func (emitEnd) isEffect()               {}
func (settleRollback) isEffect()        {}
func (materializationEnded) isEffect()  {}
func (watchRegistered) isEffect()       {}
func (handOver) isEffect()              {}
func (finishScopedDrain) isEffect()     {}
func (awaitMaterializations) isEffect() {}
func (awaitForests) isEffect()          {}
func (answer) isEffect()                {}

// perform does what a step decided, in order, inside the actor: I/O
// starts on a goroutine of its own and sends its result back.
func (m *Manager) perform(effects []effect) {
	for _, e := range effects {
		switch e := e.(type) {
		case reply:
			e.o.reply <- e.out
		case prepareSeed:
			go m.prepareOff(e.o, e.plan)
		case loadLog:
			go m.loadOff(e.o)
		case openEpoch:
			go m.openOff(e.o, e.o.ms)
		case commitAdmission:
			go m.admitOff(e.o)
		case commitElsewhere:
			go m.admitElsewhereOff(e.o)
		case discardCommit:
			go m.discardOff(e.o, e.refusal)
		case readPending:
			go m.readPendingOff(e.o)
		case readDrained:
			go m.readDrainedOff(e.o)
		case readOrphan:
			go m.readOrphanOff(e.o)
		case emitStart:
			m.emitStartOff(e.o)
		default:
			m.performForOp(e)
		}
	}
}

// performForOp performs the effects about op waits, epochs and drains.
func (m *Manager) performForOp(e effect) {
	switch e := e.(type) {
	case watchQueued:
		e.o.stopWatch = context.AfterFunc(e.o.ctx, queuedLink{m, e.o}.abandoned)
	case unwatchQueued:
		if e.o.stopWatch != nil {
			e.o.stopWatch()
		}
	case awaitDisposal:
		go m.waitDisposal(e.o, e.d, e.cancellable)
	default:
		m.performForEpoch(e)
	}
}

// performForEpoch performs the effects about a resident epoch.
func (m *Manager) performForEpoch(e effect) {
	switch e := e.(type) {
	case observeEpoch:
		m.observeEpoch(e.a)
	case forgetEpoch:
		e.a.handle.Observe(nil) // its agent/disposed is out: nothing more comes
	case stopEpoch:
		e.a.handle.Activation().Stop(e.cause)
	case emitEnd:
		m.emitEndOff(e.a, e.end)
	case materializationEnded:
		close(e.mat.done)
	case settleRollback:
		e.a.disposal.settle()
		for _, w := range e.a.waiters {
			close(w) // no end edge: the epoch never started
		}
	default:
		m.performForCaller(e)
	}
}

// performForCaller performs the effects about the calls that wait.
func (m *Manager) performForCaller(e effect) {
	switch e := e.(type) {
	case watchRegistered:
		e.reply <- e.w
	case handOver:
		m.pushEdge(endHandOver{e.w, e.end})
	case finishScopedDrain:
		go m.finishScopedDrain(e)
	case awaitMaterializations:
		go m.awaitMaterializations(e.mats, e.result)
	case awaitForests:
		go m.awaitForests(e)
	case answer:
		e.result <- e.err
	}
}
