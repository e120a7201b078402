package inbox

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
)

// Status is an inbox's residency: Running while a turn is claimed or a
// message waits, Idle otherwise.
type Status string

// The two statuses.
const (
	Idle    Status = "idle"
	Running Status = "running"
)

// EventKind names an inbox event; the values are the event type names
// written to the session log and the lifecycle stream.
type EventKind string

// The inbox events.
const (
	Enqueue      EventKind = "agent/inbox/enqueue" // a message was accepted
	Dequeue      EventKind = "agent/inbox/dequeue" // a turn claimed a message
	Discard      EventKind = "agent/inbox/discard" // a queued message was dropped unrun
	StatusChange EventKind = "agent/status"        // idle↔running
)

// Event is one inbox change. MessageID is set for Enqueue, Dequeue and
// Discard; Status for StatusChange.
type Event struct {
	Type      EventKind
	MessageID string
	Status    Status
	// Message is the accepted message of an Enqueue, a copy of the one
	// queued (its Content is shared with the queue: a listener must not
	// modify it); the zero UserMessage for the other kinds.
	Message event.UserMessage
	// More is true on a Discard that another Discard of the same Cancel or
	// Close follows, so that a listener can act once per batch.
	More bool
}

// errClosed is returned by Post after Close.
var errClosed = errors.New("inbox: closed")

// DefaultThroughput is how many messages a mailbox run handles before it
// yields its goroutine.
const DefaultThroughput = 300

// Claim is the user message the mailbox hands to the actor when a turn
// claims the head of the queue.
type Claim struct {
	// Message is the claimed message, with its MessageID.
	Message event.UserMessage
	ctx     context.Context
	cancel  context.CancelCauseFunc
	cause   atomic.Pointer[agent.CancelCause] // the first cause the turn was cancelled with
}

// Context is the turn's context: cancelled with an agent.CancelCause by
// Cancel or Close, and released by EndTurn.
func (c *Claim) Context() context.Context { return c.ctx }

// Cause is the CancelCause the turn was first cancelled with, and false
// while it has not been cancelled (or was only released by EndTurn). It is
// context.Cause(c.Context()) without the context's lock: a turn that wakes
// on Done while its canceller is still inside the context's cancel (which
// closes Done under that lock) reads its cause without queueing behind it.
func (c *Claim) Cause() (agent.CancelCause, bool) {
	if p := c.cause.Load(); p != nil {
		return *p, true
	}
	return agent.CancelCause{}, false
}

// release frees the turn's context at its end unless a canceller has
// claimed it already (the context, made from Background, holds nothing
// else): releasing it too would queue on the context's lock behind that
// canceller, which wakes this very turn while it holds the lock.
func (c *Claim) release() {
	if c.cause.Load() == nil {
		c.cancel(nil)
	}
}

// cancelWith records cause (unless one is recorded already), then cancels
// the turn's context with it: a reader that sees the context done finds
// the cause recorded.
func (c *Claim) cancelWith(cause agent.CancelCause) {
	recorded, err := boxed(cause)
	c.cause.CompareAndSwap(nil, recorded)
	c.cancel(err)
}

// boxedCause is a CancelCause as cancelWith records it and as the turn's
// context reports it.
type boxedCause struct {
	recorded *agent.CancelCause
	err      error
}

func boxCause(kind string) boxedCause {
	cause := agent.CancelCause{Kind: kind}
	return boxedCause{&cause, cause}
}

// The causes without a reason, boxed once: a drain cancels every agent's
// turn with one of them.
var (
	userCause     = boxCause(agent.CauseUser)
	parentCause   = boxCause(agent.CauseParent)
	disposedCause = boxCause(agent.CauseDisposed)
)

// boxed is cause as cancelWith records it and as the turn's context
// reports it (an agent.CancelCause value): one of the causes boxed once
// when it has no reason, else boxed here.
func boxed(cause agent.CancelCause) (*agent.CancelCause, error) {
	if cause.Reason == "" {
		switch cause.Kind {
		case agent.CauseUser:
			return userCause.recorded, userCause.err
		case agent.CauseParent:
			return parentCause.recorded, parentCause.err
		case agent.CauseDisposed:
			return disposedCause.recorded, disposedCause.err
		}
	}
	return boxAnew(cause)
}

// boxAnew boxes cause for boxed. It is not inlined: the copy it moves to
// the heap would be the caller's argument, moved on every call.
//
//go:noinline
func boxAnew(cause agent.CancelCause) (*agent.CancelCause, error) { return &cause, cause }

// item is one entry of the turn lane: an agent message, held by value so
// that accepting it allocates nothing once the lane's buffer exists, or a
// raw protoactor user message when raw is non-nil.
type item struct {
	msg event.UserMessage
	raw any
	enq uint64 // the message's Enqueue event is the enq-th queued (0: none to wait for)
}

// Inbox is the FIFO turn queue of one agent actor, and its mailbox.
// Its zero value is ready to use (with no observer); Init sets one.
type Inbox struct {
	observer  func(Event)
	scheduled atomic.Bool

	mu sync.Mutex
	// The flags sit by the lock, in what would be padding: every idle
	// agent holds an Inbox.
	noControl  bool // CloseControl was called
	suspended  bool
	closed     bool
	delivering bool
	invoker    actor.MessageInvoker
	dispatcher runnerScheduler // the actor's dispatcher, nil until registered
	system     []any
	control    []any  // the control lane (PostControl)
	queue      []item // queue[head:] waits; the buffer is reused once empty
	head       int
	pending    int           // agent messages in queue
	turn       *Claim        // non-nil while a turn is claimed
	idle       chan struct{} // closed on the next transition to Idle
	afterIdle  []func()      // AfterIdle callbacks waiting for Idle
	idleReady  []func()      // callbacks released by the last transition to Idle
	events     []Event       // events queued behind a delivery (see publishUnlocking)
	queued     uint64        // events queued for the observer, ever
	delivered  uint64        // events the observer has returned from, ever
	progress   chan struct{} // made by an Emit waiting for delivery; closed when delivered grows
}

// newInbox returns an empty, open, idle inbox reporting to observer.
func newInbox(observer func(Event)) *Inbox {
	b := new(Inbox)
	b.Init(observer)
	return b
}

// Init readies a zero Inbox in place for an owner that holds the Inbox
// inside its own struct (one allocation for both). observer receives every
// Event in order; nil means no events. It must not panic and should return
// quickly: it runs on the goroutine that made the change. Call Init once,
// before any other use; it does not block.
func (b *Inbox) Init(observer func(Event)) { b.observer = observer }

// Post accepts msg at the tail of the turn lane and returns its MessageID
// (msg.ID, or a new one when empty). It never blocks on a turn: it takes the
// inbox lock, emits agent/inbox/enqueue (and a status change when the inbox
// was idle), and wakes the mailbox when no turn runs. The message is not
// claimed before the Observer has returned from its enqueue event (as in
// the original, where listeners run synchronously inside the post): a
// listener that cancels on enqueue always finds it still queued. After
// Close it returns errClosed and accepts nothing.
func (b *Inbox) Post(msg event.UserMessage) (string, error) {
	if msg.ID == "" {
		msg.ID = NewMessageID()
	}
	msg.Role = "user"
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return "", errClosed
	}
	was := b.runningLocked()
	it := item{msg: msg}
	if b.observer != nil {
		it.enq = b.queued + 1 // the Enqueue published below
	}
	b.pushLocked(it)
	b.pending++
	wake, dispatcher := b.claimableLocked(), b.dispatcher
	enqueued := Event{Type: Enqueue, MessageID: msg.ID, Message: msg}
	if status, changed := b.statusChangeLocked(was); changed {
		b.publishUnlocking(enqueued, status)
	} else {
		b.publishUnlocking(enqueued)
	}
	if wake {
		b.scheduleOn(dispatcher)
	}
	return msg.ID, nil
}

// PostControl queues msg in the control lane: the actor receives it as a
// user message after the system messages and before the turn lane, also
// while a turn runs (not while the mailbox is suspended). It reports false,
// queueing nothing, once CloseControl was called. It never blocks on a
// turn.
func (b *Inbox) PostControl(msg any) bool {
	b.mu.Lock()
	if b.noControl {
		b.mu.Unlock()
		return false
	}
	b.control = append(b.control, msg)
	b.mu.Unlock()
	b.schedule()
	return true
}

// CloseControl refuses every later PostControl and returns the control
// messages still queued, which the actor will not receive: their senders
// are answered by the caller. The actor calls it when it stops.
func (b *Inbox) CloseControl() []any {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.noControl = true
	left := b.control
	b.control = nil
	return left
}

// Cancel aborts the claimed turn, if any, by cancelling its context with
// cause (once it has let go of the inbox's lock, see cancelTurn; the turn
// reads the cause from its Claim), and unless keepInbox discards every
// queued message (one agent/inbox/discard each, in queue order). With
// nothing running and nothing queued it does nothing and arms nothing
// against later messages. It returns the discarded ids once the turn's
// context is cancelled.
func (b *Inbox) Cancel(cause agent.CancelCause, keepInbox bool) []string {
	b.mu.Lock()
	turn, discarded := b.turn, b.discardLocked(keepInbox)
	b.mu.Unlock()
	cancelTurn(turn, cause)
	b.deliver()
	b.startIdleReady()
	return discarded
}

// Discard drops every queued message unrun (one agent/inbox/discard each,
// in queue order) and leaves the claimed turn, if any, running. It
// returns the discarded ids.
func (b *Inbox) Discard() []string {
	b.mu.Lock()
	discarded := b.discardLocked(false)
	b.mu.Unlock()
	b.deliver()
	b.startIdleReady()
	return discarded
}

// Close cancels like Cancel(cause, false) and refuses every later Post with
// errClosed. It is idempotent; the running turn, if any, still ends with
// EndTurn.
func (b *Inbox) Close(cause agent.CancelCause) []string {
	b.mu.Lock()
	b.closed = true
	turn, discarded := b.turn, b.discardLocked(false)
	b.mu.Unlock()
	cancelTurn(turn, cause)
	b.deliver()
	b.startIdleReady()
	return discarded
}

// EndTurn ends the claimed turn: it releases the turn's context (unless
// Cancel or Close cancelled it already), emits a status change when
// nothing else waits, and lets the mailbox claim the next message. The
// actor's turn goroutine calls it once, after its last event is logged,
// and it runs the mailbox right there on that goroutine (which is about
// to end anyway) rather than handing it to the dispatcher: one goroutine
// switch less per turn. When the inbox is then idle, the AfterIdle
// callbacks waiting for it run here too, in order. It returns
// when all that is over.
func (b *Inbox) EndTurn() {
	b.mu.Lock()
	if b.turn == nil {
		b.mu.Unlock()
		return
	}
	was := b.runningLocked()
	b.turn.release()
	b.turn = nil
	wake := b.claimableLocked() && b.invoker != nil
	if status, changed := b.statusChangeLocked(was); changed {
		b.publishUnlocking(status)
	} else {
		b.mu.Unlock()
	}
	if wake && b.scheduled.CompareAndSwap(false, true) {
		b.process()
	}
	for _, fn := range b.takeIdleReady() {
		fn()
	}
}

// AfterIdle arranges for fn to run once the inbox is Idle (no claimed
// turn, nothing queued): on the goroutine of the EndTurn that makes it
// Idle, after that call's mailbox run, or on a new goroutine when it is
// Idle already or turns Idle through Cancel or Close. It never blocks.
func (b *Inbox) AfterIdle(fn func()) {
	b.mu.Lock()
	if b.runningLocked() {
		b.afterIdle = append(b.afterIdle, fn)
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	go fn()
}

func (b *Inbox) takeIdleReady() []func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	ready := b.idleReady
	b.idleReady = nil
	return ready
}

// startIdleReady runs the released AfterIdle callbacks on new goroutines:
// the caller may be an actor that must not block.
func (b *Inbox) startIdleReady() {
	for _, fn := range b.takeIdleReady() {
		go fn()
	}
}

// RunHere calls fn and then runs the mailbox on the calling goroutine,
// so that what fn queues (a protoactor Stop, say) is processed here rather
// than on the dispatcher: the wake-up of another goroutine is saved when
// the caller waits for the outcome anyway. When a mailbox run is already
// going elsewhere it only calls fn, and that run handles what fn queued.
// It returns when its run is over; it must not be called from inside
// the actor.
func (b *Inbox) RunHere(fn func()) {
	own := b.scheduled.CompareAndSwap(false, true)
	fn()
	if !own {
		return
	}
	b.mu.Lock()
	registered := b.invoker != nil
	b.mu.Unlock()
	if registered {
		b.process()
	} else {
		b.scheduled.Store(false)
	}
}

// Emit queues e behind the events the inbox has already queued and
// delivers it to the Observer in that order. The registry emits
// agent/created and agent/disposed this way, so that all events of one
// agent reach listeners in one order. Emit returns once e has been
// delivered: by this goroutine, or, when another goroutine is delivering
// this inbox's events at that moment, by that goroutine, which Emit waits
// for. The one exception is an Emit made from inside an Observer call (a
// listener disposing the agent it is told about): the goroutine delivering
// this inbox's events may be its own, so it does not wait, and e follows,
// in order, once that delivery returns.
func (b *Inbox) Emit(e Event) {
	b.mu.Lock()
	b.awaitDelivered(b.publishUnlocking(e))
}

// EmitQueued queues e as Emit does, then calls queued (when non-nil),
// then delivers e unless another goroutine is delivering this inbox's
// events, which then delivers e after them: unlike Emit it never waits for
// another goroutine's delivery, so it may be called by a goroutine that a
// listener being delivered to waits for. What queued releases can no
// longer see the inbox's events without e.
func (b *Inbox) EmitQueued(e Event, queued func()) {
	b.mu.Lock()
	if b.observer == nil || b.delivering || len(b.events) > 0 {
		b.emitLocked(e)
		b.mu.Unlock()
		callQueued(queued)
		b.deliver()
		return
	}
	// Nothing queued, nobody delivering: deliver e straight from here, as
	// publishUnlocking does, with no buffer. Events published meanwhile
	// queue behind e.
	b.queued++
	b.delivering = true
	from := b.delivered
	b.mu.Unlock()
	callQueued(queued)
	b.handOver([]Event{e})
	b.mu.Lock()
	b.deliveredLocked(1)
	b.drainUnlocking(from)
}

// callQueued calls EmitQueued's queued, if any.
func callQueued(queued func()) {
	if queued != nil {
		queued()
	}
}

// awaitDelivered blocks until the observer has returned from the first n
// events ever queued, unless the caller is inside an observer call.
func (b *Inbox) awaitDelivered(n uint64) {
	b.mu.Lock()
	if b.delivered >= n {
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	if InsideDelivery() {
		return
	}
	b.mu.Lock()
	for b.delivered < n {
		if b.progress == nil {
			b.progress = make(chan struct{})
		}
		progress := b.progress
		b.mu.Unlock()
		<-progress
		b.mu.Lock()
	}
	b.mu.Unlock()
}

// Status reports Running while a turn is claimed or a message waits.
func (b *Inbox) Status() Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	return statusOf(b.runningLocked())
}

// isClosed reports whether Close was called.
func (b *Inbox) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// queueLen is the number of queued messages not yet claimed.
func (b *Inbox) queueLen() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pending
}

// WhenIdle blocks until the inbox is Idle (no claimed turn, nothing queued)
// or ctx is done, returning ctx.Err() in that case. It returns at once when
// the inbox is already idle.
func (b *Inbox) WhenIdle(ctx context.Context) error {
	b.mu.Lock()
	if !b.runningLocked() {
		b.mu.Unlock()
		return nil
	}
	if b.idle == nil {
		b.idle = make(chan struct{})
	}
	idle := b.idle
	b.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cancelTurn cancels turn, the turn claimed when Cancel or Close took the
// lock, if any. It runs after the lock is released: cancelling wakes the
// turn's goroutine, which must not find the inbox still locked on its way
// to EndTurn. Should that turn have ended in between, cancelling its
// released context changes nothing, as if the cancel had come after it.
func cancelTurn(turn *Claim, cause agent.CancelCause) {
	if turn != nil {
		turn.cancelWith(cause)
	}
}

// discardLocked discards every queued agent message unless keepInbox (the
// lock held) and returns their ids.
func (b *Inbox) discardLocked(keepInbox bool) []string {
	if keepInbox || b.pending == 0 {
		return nil
	}
	was := b.runningLocked()
	discarded := make([]string, 0, b.pending)
	kept := b.queue[:0]
	for _, it := range b.queue[b.head:] {
		if it.raw != nil {
			kept = append(kept, it)
			continue
		}
		discarded = append(discarded, it.msg.ID)
	}
	for i, id := range discarded {
		b.emitLocked(Event{Type: Discard, MessageID: id, More: i < len(discarded)-1})
	}
	clear(b.queue[len(kept):])
	b.queue, b.head, b.pending = kept, 0, 0
	if status, changed := b.statusChangeLocked(was); changed {
		b.emitLocked(status)
	}
	return discarded
}

func (b *Inbox) runningLocked() bool { return b.turn != nil || b.pending > 0 }

func statusOf(running bool) Status {
	if running {
		return Running
	}
	return Idle
}

// statusChangeLocked returns the status change to publish, and true, when
// running differs from was and, on the way to Idle, releases WhenIdle
// waiters and the AfterIdle callbacks (to idleReady, which the caller
// runs once unlocked).
func (b *Inbox) statusChangeLocked(was bool) (Event, bool) {
	now := b.runningLocked()
	if now == was {
		return Event{}, false
	}
	changed := Event{Type: StatusChange, Status: statusOf(now)}
	if now {
		return changed, true
	}
	if b.idle != nil {
		close(b.idle)
		b.idle = nil
	}
	if b.idleReady == nil { // the common case: hand the slice over
		b.idleReady, b.afterIdle = b.afterIdle, nil
		return changed, true
	}
	b.idleReady = append(b.idleReady, b.afterIdle...)
	b.afterIdle = nil
	return changed, true
}

// emitLocked queues e for the next delivery (see deliver); the events of
// the common changes are published by publishUnlocking instead.
func (b *Inbox) emitLocked(e Event) {
	if b.observer != nil {
		b.events = append(b.events, e)
		b.queued++
	}
}

// deliverFrame names handOver, the one caller of the observer, as
// runtime frames report it.
var deliverFrame = runtime.FuncForPC(reflect.ValueOf((*Inbox).handOver).Pointer()).Name()

// InsideDelivery reports whether the calling goroutine is inside an
// Observer call (of any inbox). A caller about to wait for work that may be
// the very delivery it runs inside asks it first. Go gives a goroutine no
// cheaper identity, so it walks the stack: ask only when about to wait.
func InsideDelivery() bool {
	pcs := make([]uintptr, 64)
	for {
		n := runtime.Callers(2, pcs)
		if n < len(pcs) {
			pcs = pcs[:n]
			break
		}
		pcs = make([]uintptr, 2*len(pcs))
	}
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if f.Function == deliverFrame {
			return true
		}
		if !more {
			return false
		}
	}
}

// deliver hands queued events to the observer, one goroutine at a time, in
// order, without holding the lock while the observer runs.
func (b *Inbox) deliver() {
	b.mu.Lock()
	b.deliverUnlocking()
}

// deliverUnlocking is deliver entered with the lock held, which it
// releases: a caller that has just queued events under the lock saves
// taking it again.
func (b *Inbox) deliverUnlocking() {
	if b.delivering || len(b.events) == 0 {
		b.mu.Unlock()
		return
	}
	b.delivering = true
	b.drainUnlocking(b.delivered)
}

// publishUnlocking publishes es, the events of one change made under the
// lock (held on entry, released on return), behind every event published
// or queued before them. When nothing is queued or being delivered it
// hands es to the observer itself, straight from es: the common change
// needs no buffer, and an idle inbox keeps none. Otherwise it queues es
// and delivers them with the queue, or leaves them to the goroutine
// delivering. It returns how many events had been queued once es were
// (what awaitDelivered takes), 0 without an observer.
func (b *Inbox) publishUnlocking(es ...Event) uint64 {
	if b.observer == nil {
		b.mu.Unlock()
		return 0
	}
	b.queued += uint64(len(es))
	mine := b.queued
	if b.delivering || len(b.events) > 0 {
		b.events = append(b.events, es...)
		b.deliverUnlocking()
		return mine
	}
	b.delivering = true
	from := b.delivered
	b.mu.Unlock()
	b.handOver(es)
	b.mu.Lock()
	b.deliveredLocked(len(es))
	b.drainUnlocking(from)
	return mine
}

// drainUnlocking delivers the queued events until none is left, ends the
// delivery the caller began (delivering set, from events delivered when
// it began) and releases the lock, held on entry. It wakes the mailbox
// when the head message waited for its Enqueue to be delivered.
func (b *Inbox) drainUnlocking(from uint64) {
	for len(b.events) > 0 {
		events := b.events
		b.events = nil
		b.mu.Unlock()
		b.handOver(events)
		b.mu.Lock()
		b.deliveredLocked(len(events))
	}
	b.delivering = false
	wake := b.claimableLocked() && b.invoker != nil && b.queue[b.head].enq > from
	dispatcher := b.dispatcher
	b.mu.Unlock()
	if wake { // a message waited for its enqueue event to be out
		b.scheduleOn(dispatcher)
	}
}

// deliveredLocked counts n more events delivered and wakes the Emits
// waiting for them.
func (b *Inbox) deliveredLocked(n int) {
	b.delivered += uint64(n)
	if b.progress != nil {
		close(b.progress)
		b.progress = nil
	}
}

// handOver calls the observer with each of events, in order; every
// observer call is made here (see InsideDelivery).
func (b *Inbox) handOver(events []Event) {
	for _, e := range events {
		b.observer(e)
	}
}

// claimableLocked reports whether the mailbox could claim a turn now: no
// turn claimed, not suspended, and a head whose enqueue event (if any) the
// observer has returned from.
func (b *Inbox) claimableLocked() bool {
	if b.turn != nil || b.suspended || b.head >= len(b.queue) {
		return false
	}
	return b.queue[b.head].enq <= b.delivered
}

//
// actor.Mailbox
//

// mailbox is an Inbox as the protoactor mailbox of its actor; the methods
// protoactor calls stay off the Inbox's own surface.
type mailbox Inbox

var _ actor.Mailbox = (*mailbox)(nil)

// Mailbox is b as the protoactor mailbox of its agent's actor: messages
// sent to the actor queue in the turn lane behind the accepted messages.
// It is a function, not a method, so the methods protoactor calls stay off
// the Inbox's own surface.
func Mailbox(b *Inbox) actorkit.Mailbox { return (*mailbox)(b) }

// PostUserMessage queues a protoactor user message (one sent to the
// actor's PID) in the turn lane, behind the messages accepted before it.
// After Close it is dropped: the actor is going away.
func (m *mailbox) PostUserMessage(message any) {
	b := (*Inbox)(m)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.pushLocked(item{raw: message})
	wake := b.claimableLocked()
	b.mu.Unlock()
	if wake {
		b.schedule()
	}
}

// PostSystemMessage queues a protoactor system message; system messages are
// processed before any user message, also while a turn runs.
func (m *mailbox) PostSystemMessage(message any) {
	b := (*Inbox)(m)
	b.mu.Lock()
	b.system = append(b.system, message)
	b.mu.Unlock()
	b.schedule()
}

// RegisterHandlers is called once by protoactor's spawner.
func (m *mailbox) RegisterHandlers(invoker actor.MessageInvoker, dispatcher actor.Dispatcher) {
	m.mu.Lock()
	m.invoker, m.dispatcher = invoker, asRunnerScheduler(dispatcher)
	m.mu.Unlock()
}

// Start is called by protoactor's spawner after RegisterHandlers.
func (m *mailbox) Start() {}

// UserMessageCount is the number of queued turn-lane entries.
func (m *mailbox) UserMessageCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.queue) - m.head
}

// schedule starts a mailbox run on the dispatcher unless one is going.
func (b *Inbox) schedule() {
	b.mu.Lock()
	dispatcher := b.dispatcher
	b.mu.Unlock()
	b.scheduleOn(dispatcher)
}

// runnerScheduler is a dispatcher that takes the mailbox itself rather
// than a closure over it (the runtime's pool): a run costs no allocation.
type runnerScheduler interface {
	ScheduleRunner(interface{ Run() })
}

// asRunnerScheduler is d as a runnerScheduler, found once at
// registration rather than asserted at every wake-up: d itself when it is
// one, nil when d is, else d behind closureScheduler.
func asRunnerScheduler(d actor.Dispatcher) runnerScheduler {
	if runner, ok := d.(runnerScheduler); ok || d == nil {
		return runner
	}
	return closureScheduler{d}
}

// closureScheduler schedules a runner's Run on a dispatcher that takes
// closures only.
type closureScheduler struct{ actor.Dispatcher }

func (s closureScheduler) ScheduleRunner(r interface{ Run() }) { s.Schedule(r.Run) }

// scheduleOn starts a mailbox run on dispatcher, b's (nil: none yet),
// unless one is going.
func (b *Inbox) scheduleOn(dispatcher runnerScheduler) {
	if dispatcher == nil || !b.scheduled.CompareAndSwap(false, true) {
		return
	}
	dispatcher.ScheduleRunner((*mailbox)(b))
}

// Run runs the mailbox once scheduled (see runnerScheduler).
func (m *mailbox) Run() { (*Inbox)(m).process() }

// process runs the mailbox until it has nothing it may process.
func (b *Inbox) process() {
	for {
		b.run()
		b.scheduled.Store(false)
		if !b.hasWork() || !b.scheduled.CompareAndSwap(false, true) {
			return
		}
	}
}

func (b *Inbox) hasWork() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.system) > 0 || b.controlReadyLocked() || b.claimableLocked()
}

// controlReadyLocked reports whether a control message may be invoked.
func (b *Inbox) controlReadyLocked() bool { return len(b.control) > 0 && !b.suspended }

// run processes system messages first, then the control lane, then
// claims from the turn lane, until none yields anything. A panic escapes to the actor's supervisor
// as protoactor's own mailbox does.
func (b *Inbox) run() {
	var msg any
	defer func() {
		if r := recover(); r != nil {
			b.invoker.EscalateFailure(r, msg)
		}
	}()
	for i := 0; ; i++ {
		if i == DefaultThroughput {
			i = 0
			runtime.Gosched()
		}
		var system bool
		if msg, system = b.next(); msg == nil {
			return
		}
		if system {
			b.invoker.InvokeSystemMessage(msg)
		} else {
			b.invoker.InvokeUserMessage(msg)
		}
	}
}

// next pops the next message to invoke: a system message, else a control
// message, else the head of the turn lane when no turn is claimed.
// SuspendMailbox and ResumeMailbox are handled here, as protoactor's
// mailbox does.
func (b *Inbox) next() (msg any, system bool) {
	b.mu.Lock()
	for len(b.system) > 0 {
		msg = b.system[0]
		b.system[0] = nil
		b.system = b.system[1:]
		switch msg.(type) {
		case *actor.SuspendMailbox:
			b.suspended = true
		case *actor.ResumeMailbox:
			b.suspended = false
		default:
			b.mu.Unlock()
			return msg, true
		}
	}
	if len(b.system) == 0 {
		b.system = nil
	}
	if b.controlReadyLocked() {
		msg = b.control[0]
		b.control[0] = nil
		b.control = b.control[1:]
		b.mu.Unlock()
		return msg, false
	}
	if !b.claimableLocked() {
		b.mu.Unlock()
		return nil, false
	}
	msg = b.popLocked()
	if claim, ok := msg.(*Claim); ok {
		b.publishUnlocking(Event{Type: Dequeue, MessageID: claim.Message.ID})
	} else {
		b.mu.Unlock()
	}
	return msg, false
}

// pushLocked appends to the turn lane, first sliding the waiting entries
// to the front when the buffer is full and its front is spent.
func (b *Inbox) pushLocked(it item) {
	if b.head > 0 && len(b.queue) == cap(b.queue) {
		n := copy(b.queue, b.queue[b.head:])
		clear(b.queue[n:])
		b.queue, b.head = b.queue[:n], 0
	}
	b.queue = append(b.queue, it)
}

// popLocked removes the head of the turn lane; an agent message becomes a
// Claim with a fresh turn context, whose Dequeue the caller publishes.
func (b *Inbox) popLocked() any {
	head := b.queue[b.head]
	b.queue[b.head] = item{}
	b.head++
	if b.head == len(b.queue) {
		b.queue, b.head = b.queue[:0], 0
	}
	if head.raw != nil {
		return head.raw
	}
	b.pending--
	ctx, cancel := context.WithCancelCause(context.Background())
	b.turn = &Claim{Message: head.msg, ctx: ctx, cancel: cancel}
	return b.turn
}
