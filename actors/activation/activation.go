package activation

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// Config describes one agent actor.
type Config struct {
	// Agent runs the turns.
	Agent agent.Agent
	// Session is the live session the turns are logged to; its id is the
	// agent's.
	Session *session.Live
	// Provider and Model attribute assistant messages; empty means
	// vocab.DefaultProvider / vocab.DefaultModel.
	Provider string
	Model    string
	// Actors is where the actor is spawned (its System is required).
	Actors actorkit.Host
	// Subagents returns the continuable-children capability bound to this
	// agent, or nil; it is called by Host.Subagents during a turn. nil
	// means no capability.
	Subagents func() agent.Subagents
	// Observer receives the inbox events (see inbox.Inbox.Init).
	Observer func(inbox.Event)
	// Logger receives failures of logging and of the actor; nil discards.
	Logger *slog.Logger
	// Parent, when set, is the agent whose actor this one's is spawned
	// under, as a protoactor child: the parent's actor stops only after
	// this one has stopped, released included. Nil spawns it at the root.
	Parent *Activation
	// Release is the last step of the agent's stop (see Stop); nil: none.
	Release func()
}

// Activation is one live agent actor. All methods are safe for concurrent
// use. Its fields are ordered to pack: every idle agent holds one.
type Activation struct {
	agent     agent.Agent
	live      *session.Live
	kit       *kit               // what it shares with the host's other agents
	source    *event.ModelSource // shared through the kit
	subagents func() agent.Subagents
	pid       *actor.PID
	parent    *Activation                   // the agent spawned under (Config.Parent), or nil
	stopped   atomic.Pointer[chan struct{}] // made on first use (see stoppedSignal)
	stopBegun atomic.Bool                   // Stop or Dispose began, or the actor's Stopping arrived
	released  atomic.Bool                   // the release step was taken (releaseStep)
	family    atomic.Pointer[family]        // made by the first spawn under it, or its stop (leafStopped)
	// stopping: the actor's Stopping arrived (touched by the actor only).
	stopping bool
	// counted: lastTurn counts the turn/starts the session held before
	// the first turn (counted then, off the admission path). Touched only
	// by turn goroutines, which the inbox serializes, as lastTurn is.
	counted  bool
	lastTurn int
	onFenced atomic.Pointer[func()] // see OnFenced
	onStop   atomic.Pointer[func()] // see OnStop
	release  func()                 // the stop's last step (Config.Release)
	lane     *releaseLane           // the stop's release lane (actor only)

	conversation atomic.Pointer[conversation] // made by the first read

	outcomeMu sync.Mutex
	outcome   outcome

	inbox inbox.Inbox // held here: one allocation with the Activation
}

// Outcome is what the Activation's turns logged last, by seq, so that a
// reader of its session can tell which of its events they are without
// decoding any: for the last turn/end logged, the seq of the
// message-triggered turn/start that opened that turn's retry chain and
// the turn's reason kind; and the seq of the last assistant/message. A
// seq is -1 when no such event was logged. Read it once the agent is
// idle (WhenIdle) for the final one.
func (a *Activation) Outcome() (chainStart int64, reason string, outputSeq int64) {
	a.outcomeMu.Lock()
	defer a.outcomeMu.Unlock()
	return a.outcome.chainStart, a.outcome.reason, a.outcome.outputSeq
}

// outcome is what Outcome returns.
type outcome struct {
	chainStart int64
	reason     string
	outputSeq  int64
}

// closed records that a turn of the chain opened by the turn/start at
// chainStart logged its turn/end with reason kind.
func (a *Activation) closed(chainStart int64, kind string) {
	a.outcomeMu.Lock()
	a.outcome.chainStart, a.outcome.reason = chainStart, kind
	a.outcomeMu.Unlock()
}

// said records that an assistant/message was logged at seq.
func (a *Activation) said(seq int64) {
	a.outcomeMu.Lock()
	a.outcome.outputSeq = seq
	a.outcomeMu.Unlock()
}

// Start spawns the agent actor and returns it idle, ready for Followup.
// It blocks only while protoactor registers the actor. The turn counter
// starts after the highest turn/start among the events cfg.Session holds
// when the first turn begins.
func Start(cfg Config) (*Activation, error) {
	k := kitFor(cfg.Actors, orDiscard(cfg.Logger))
	a := &Activation{
		agent:     cfg.Agent,
		live:      cfg.Session,
		kit:       k,
		source:    k.source(cfg.Provider, cfg.Model),
		subagents: cfg.Subagents,
		parent:    cfg.Parent,
		release:   cfg.Release,
		outcome:   outcome{chainStart: -1, outputSeq: -1},
	}
	a.inbox.Init(cfg.Observer)
	cfg.Session.OnWriteFailure(a.logFailed)
	pid, err := a.spawn()
	if err != nil {
		return nil, err
	}
	a.pid = pid
	return a, nil
}

// id is the agent's id, its session's.
func (a *Activation) id() string { return a.live.ID() }

// spawn spawns the actor at the root, named after the agent, or under
// the parent's actor, named by a registry number only: a child's PID
// extends its parent's, and the process registry hashes the whole PID on
// every lookup, so a forest named by agent ids would hash ids as long as
// its depth times an id's length.
func (a *Activation) spawn() (*actor.PID, error) {
	system := a.kit.system
	if a.parent == nil {
		name := "agent/" + a.id() + "/" + system.ProcessRegistry.NextId()
		return a.kit.spawn(a, func() (*actor.PID, error) { return system.Root.SpawnNamed(a.kit.root, name) })
	}
	return a.parent.spawnChild(a, system.ProcessRegistry.NextId())
}

// Ref is the address of the agent's actor (its mailbox is the inbox).
func (a *Activation) Ref() actorkit.Ref { return a.pid }

// OnFenced makes fn what the agent calls once its session's lease was
// fenced (an append refused, or a renewal that found the lease lost) and
// its cancelled turn has ended, replacing any earlier fn: the agent's
// owner then disposes it. fn runs on the goroutine that saw the agent
// idle and must not block.
func (a *Activation) OnFenced(fn func()) { a.onFenced.Store(&fn) }

// OnStop makes fn what the agent calls when its stop begins, whoever
// began it (Stop, Dispose, its parent's stop, or the supervisor), before
// the inbox closes and before the agents spawned under it are stopped,
// replacing any earlier fn. fn runs on the goroutine that began the stop
// (the actor's, for the supervisor) and must not block.
func (a *Activation) OnStop(fn func()) { a.onStop.Store(&fn) }

// Session is the live session the agent logs to.
func (a *Activation) Session() *session.Live { return a.live }

// Followup accepts msg as a later turn of this agent and returns its
// MessageID once the inbox has accepted it (msg.ID when set, else a new
// uuid). It does not wait for the turn. It fails with ctx's error when ctx
// is already done, with fault.DurabilityFailed (wrapping the write's
// error: syscall.ENOSPC for a full disk) once the session's log has
// failed, since the message could never be logged, and with
// fault.InboxClosed once Dispose has begun.
func (a *Activation) Followup(ctx context.Context, msg event.UserMessage) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if msg.Source.Kind == "" {
		return "", invalidMessage(a.id(), "its source has no kind")
	}
	if err := a.live.WriteFailure(); err != nil {
		return "", logFailedRefusal(a.id(), err)
	}
	msg.Content = nonNilContent(msg.Content)
	id, err := a.inbox.Post(msg)
	if err != nil {
		return "", inboxClosed(a.id(), err)
	}
	return id, nil
}

// Cancel aborts the running turn, if any (it ends with turn/end aborted and
// cause), and unless keepInbox discards every queued message without running
// it (agent/inbox/discard for each). It does not wait for the turn to end.
func (a *Activation) Cancel(cause agent.CancelCause, keepInbox bool) {
	a.inbox.Cancel(cause, keepInbox)
}

// Status is inbox.Running while a turn runs or a message waits.
func (a *Activation) Status() inbox.Status { return a.inbox.Status() }

// WhenIdle blocks until no turn runs and no message waits, or ctx is done.
func (a *Activation) WhenIdle(ctx context.Context) error { return a.inbox.WhenIdle(ctx) }

// AfterIdle runs fn once no turn runs and no message waits (see
// inbox.Inbox.AfterIdle): on the goroutine of the turn that ends last, or
// on a new one.
func (a *Activation) AfterIdle(fn func()) { a.inbox.AfterIdle(fn) }

// Emit delivers e to the Observer in order with the inbox's own events
// (see inbox.Inbox.Emit).
func (a *Activation) Emit(e inbox.Event) { a.inbox.Emit(e) }

// EmitQueued queues e, calls queued, and delivers e without waiting for
// another goroutine's delivery (see inbox.Inbox.EmitQueued).
func (a *Activation) EmitQueued(e inbox.Event, queued func()) { a.inbox.EmitQueued(e, queued) }

// Done is closed when the actor has stopped.
func (a *Activation) Done() <-chan struct{} { return a.stoppedSignal() }

// stoppedSignal is the channel Done returns, made on the first call (by
// Done, Dispose or the actor's stop) so an idle agent carries none.
func (a *Activation) stoppedSignal() chan struct{} {
	if c := a.stopped.Load(); c != nil {
		return *c
	}
	c := make(chan struct{})
	if a.stopped.CompareAndSwap(nil, &c) {
		return c
	}
	return *a.stopped.Load()
}

// closedSignal is the Done of every agent that stopped before anybody
// asked for its own channel.
var closedSignal = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// signalStopped closes Done: the channel made for it, else none is made
// and Done gets closedSignal.
func (a *Activation) signalStopped() {
	if !a.stopped.CompareAndSwap(nil, &closedSignal) {
		close(*a.stopped.Load())
	}
}

// Stop begins the agent's stop and does not wait for it: OnStop's fn is
// called, the inbox closes (later follow-ups fail with
// fault.InboxClosed, queued messages are discarded, the running turn is
// cancelled with cause unless it was cancelled already), every agent
// spawned under this one is stopped the same way, top-down, and once
// those have all stopped and the cancelled turn has ended, the release
// step runs (Config.Release) off the actor, on the goroutine that saw the
// last of them end (the turn's own, when it ends last); then the actor
// stops, and only then can its parent's stop end (Done). Idempotent.
func (a *Activation) Stop(cause agent.CancelCause) { a.beginStop(cause, false) }

// Dispose stops the agent (Stop, cause disposed) and waits for the actor
// to have stopped: first it closes the inbox and waits until the
// cancelled turn has logged its turn/end, then, once the agents spawned
// under it have stopped, the release step runs and the actor stops on the
// calling goroutine unless the stop was begun elsewhere. It blocks until
// then or until ctx is done, returning ctx.Err(); calling it again
// resumes where it stopped, and after a completed Dispose it returns nil
// at once. It does not flush or release the session unless the release
// step does.
func (a *Activation) Dispose(ctx context.Context) error {
	a.inbox.Close(agent.CancelCause{Kind: agent.CauseDisposed})
	if err := a.inbox.WhenIdle(ctx); err != nil {
		return err
	}
	a.beginStop(agent.CancelCause{Kind: agent.CauseDisposed}, true)
	select {
	case <-a.stoppedSignal():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// receiver is the protoactor face of an Activation.
type receiver Activation

// Receive starts claimed turns and tracks the actor's lifecycle. It never
// blocks.
func (r *receiver) Receive(c actor.Context) {
	a := (*Activation)(r)
	switch m := c.Message().(type) {
	case *inbox.Claim:
		go a.runTurn(m)
	case *spawnRequest:
		a.spawnRequested(c, m)
	case *actor.Stopping:
		a.stopping = true
		if a.stopBegun.CompareAndSwap(false, true) { // not through Stop
			a.stopBegins(agent.CancelCause{Kind: agent.CauseDisposed})
		}
		if !a.released.Load() {
			a.openReleaseLane(c)
		}
	case *actor.Terminated:
		a.childStopped(c)
	case *actor.Stopped:
		a.refuseSpawns()
		a.holdName(c)
		a.signalStopped()
	}
}

// discard is the logger of every agent configured without one: one
// logger, so that they share a kit.
var discard = slog.New(slog.DiscardHandler)

func orDiscard(logger *slog.Logger) *slog.Logger {
	if logger == nil {
		return discard
	}
	return logger
}

// lastTurn is the highest turn number of the turn/start events in events.
func lastTurn(events []session.Event) int {
	last := 0
	for _, e := range events {
		if e.Type != vocab.TypeTurnStart {
			continue
		}
		if start, err := vocab.DecodeAs[vocab.TurnStart](e.Type, e.Data); err == nil && start.Turn > last {
			last = start.Turn
		}
	}
	return last
}
