package session

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// Live is one live session: its immutable header and its events in
// memory, written behind to the registry's store by a flusher goroutine
// that exists only while writes are pending.
type Live struct {
	s       *Sessions
	log     boundLog // the store's handle on this log, or nil (see logBinder)
	epoch   Epoch    // the lease it writes under (0: the store is not Fenced)
	header  Header
	created uint64 // publication order in s, for Sessions.List

	appendMu sync.Mutex // orders appends with their Appended notifications

	mu        sync.Mutex
	events    []Event
	persisted int                   // events[:persisted] are durable
	due       int                   // events[:due] are written without waiting (see AppendDeferred)
	window    *time.Timer           // makes the deferred events due when it fires; nil while none waits
	flushing  bool                  // a flusher goroutine is running
	progress  chan struct{}         // made by a flush waiter; closed (and dropped) when persisted, flushing or writeErr change
	writeErr  atomic.Pointer[error] // set once, under mu; read without it
	released  bool
	// ownDescriptor is set once an event past the seed is a
	// subagent/descriptor (see HoldsOwnDescriptor); it is never cleared.
	ownDescriptor atomic.Bool
	onFailure     func(unwritten []Event, err error) // see OnWriteFailure
	reporting     bool                               // onFailure runs: flush waiters wait for it
}

func newLive(s *Sessions, h Header, events []Event, persisted int, epoch Epoch) *Live {
	l := &Live{s: s, header: h, events: events, persisted: persisted, due: len(events), epoch: epoch}
	own := events[min(h.OwnStart(), len(events)):]
	l.ownDescriptor.Store(slices.ContainsFunc(own, func(e Event) bool { return e.Type == vocab.TypeSubagentDescriptor }))
	if b, ok := s.store.(logBinder); ok {
		l.log = b.bindLog(h.ID)
	}
	return l
}

// ID returns the session id.
func (l *Live) ID() string { return l.header.ID }

// Epoch returns the lease l writes under, 0 when its store is not
// Fenced. It does not block.
func (l *Live) Epoch() Epoch { return l.epoch }

// Header returns a copy of the immutable header.
func (l *Live) Header() Header {
	h := l.header
	if h.SeedLength != nil {
		n := *h.SeedLength
		h.SeedLength = &n
	}
	return h
}

// HoldsOwnDescriptor reports whether the session's own events (those past
// its seed, header.SeedLength) hold a subagent/descriptor: the session
// belongs to a continuation owner. It sees every event appended before
// it is called, costs one atomic load and does not block.
func (l *Live) HoldsOwnDescriptor() bool { return l.ownDescriptor.Load() }

// noteOwn records e, just appended to l's events at e.Seq, for
// HoldsOwnDescriptor.
func (l *Live) noteOwn(e Event) {
	if e.Type == vocab.TypeSubagentDescriptor && e.Seq >= int64(l.header.OwnStart()) {
		l.ownDescriptor.Store(true)
	}
}

// Events returns a snapshot of the events (no copy of the events: do not
// modify them). Later appends do not show in it. Every payload in it is
// valid compact JSON: Append and the store's readers check it.
func (l *Live) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.events[:len(l.events):len(l.events)]
}

// Len returns the number of events, which is also the next seq.
func (l *Live) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// AppendOption adjusts an event built by Live.Append.
type AppendOption func(*Event)

// Surface marks the event as appended to the model-visible surface
// (surfaceOp "append"); user/assistant messages and tool results need it.
func Surface() AppendOption {
	return func(e *Event) { e.SurfaceOp = json.RawMessage(`"append"`) }
}

// Sources records the seqs of the events this one derives from
// (sourceEventSeqs).
func Sources(seqs ...int64) AppendOption {
	return func(e *Event) { e.SourceEventSeqs = append([]int64{}, seqs...) }
}

// ignorable marks an event type older readers may skip (ignorable:true).
func ignorable() AppendOption {
	return func(e *Event) { e.Ignorable = true }
}

// Append adds an event with seq = Len() and time = now (Unix ms). It is
// visible in memory at once, then Subscribe listeners get Appended (on
// this goroutine), then Append returns; the write to the store happens
// behind (see Sessions.Flush). An assistant/chunk starts no write of its
// own: it joins the next one, which the next other event, a Flush or
// Release starts, or else the end of a 200 ms window its first waiting
// chunk opened, so a model's streamed chunks share the write and the sync
// of the message that ends them. data is encoded with encodeData. Append
// is refused after Release (errNotLive), after a failed write-behind
// (ErrLogFailed), for a retired event vocabulary and for invalid JSON an
// AppendOption put in the event (ErrInvalid).
func (l *Live) Append(typ string, data any, opts ...AppendOption) (Event, error) {
	if typ == chunkType {
		return l.add(typ, data, opts, writeDeferred)
	}
	return l.add(typ, data, opts, writeBehind)
}

// chunkType is the event type whose writes Append defers.
const chunkType = "assistant/chunk"

// deferWindow bounds how long a deferred event waits in memory for a
// write to join.
const deferWindow = 200 * time.Millisecond

// writeMode is when an added event is handed to the store.
type writeMode int

const (
	writeBehind   writeMode = iota // now, by the flusher goroutine
	writeDeferred                  // with the next write, or when the window ends
	writeThrough                   // now, by the caller (AppendThrough)
)

// AppendThrough is Append followed by writing every pending event through
// to the store before it returns: on the calling goroutine when no
// write-behind is running (no goroutine is started), else by waiting for
// it. It suits a last event nothing else waits behind, such as the end of
// a cancelled turn. A failed write is returned (ErrLogFailed) after the
// event was added; without a store it is Append.
func (l *Live) AppendThrough(typ string, data any, opts ...AppendOption) (Event, error) {
	e, err := l.add(typ, data, opts, writeThrough)
	if err != nil {
		return e, err
	}
	return e, l.writeThrough()
}

func (l *Live) add(typ string, data any, opts []AppendOption, mode writeMode) (Event, error) {
	raw, err := encodeData(data)
	if err != nil {
		return Event{}, err
	}
	e := Event{Type: typ, Data: raw}
	if len(opts) > 0 {
		e = withOptions(e, opts)
	}
	if err := checkOptioned(l.header.ID, e, len(opts) > 0); err != nil {
		return Event{}, err
	}
	if msg, legacy := legacyEvent(l.header.ID, []Event{e}); legacy {
		return Event{}, invalidf("%s", msg)
	}
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	if e, err = l.push(e, mode); err != nil {
		return Event{}, err
	}
	l.s.notify(Appended, l, e)
	return e, nil
}

// withOptions is e adjusted by opts. The options take e's address, so
// the copy they adjust is moved to the heap: an append without options
// does not call it, and its event stays on the stack.
func withOptions(e Event, opts []AppendOption) Event {
	for _, opt := range opts {
		opt(&e)
	}
	return e
}

// checkOptioned checks the raw JSON an AppendOption may have set: the
// store's bound write path (see logBinder) takes a session's events as
// checked here.
func checkOptioned(id string, e Event, optioned bool) error {
	if !optioned {
		return nil
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"data", e.Data}, {"surfaceOp", e.SurfaceOp}} {
		if err := checkRaw(f.name, f.raw); err != nil {
			return invalidf(`session "%s": event %s: %v`, id, e.Type, err)
		}
	}
	return nil
}

// push assigns seq and time, stores the event and, as mode says, wakes
// the flusher or opens the deferral window.
func (l *Live) push(e Event, mode writeMode) (Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return Event{}, notLive(l)
	}
	if err := l.WriteFailure(); err != nil {
		return Event{}, err
	}
	e.Seq = int64(len(l.events))
	e.Time = time.Now().UnixMilli()
	if len(l.events) == cap(l.events) {
		// A turn appends several events in a row (at least a message, its
		// start and its end): grow by at least eight so they share one
		// reallocation rather than doubling a small slice twice.
		l.events = slices.Grow(l.events, max(len(l.events), 8))
	}
	l.events = append(l.events, e)
	l.noteOwn(e)
	switch mode {
	case writeBehind:
		l.due = len(l.events)
		l.startFlusherLocked()
	case writeDeferred:
		l.openWindowLocked()
	case writeThrough:
		l.due = len(l.events)
	}
	return e, nil
}

// openWindowLocked starts the deferral window unless one is open (l.mu
// held): when it ends, every event present then is due.
func (l *Live) openWindowLocked() {
	if l.window == nil && l.s.store != nil {
		l.window = time.AfterFunc(deferWindow, l.windowEnded)
	}
}

func (l *Live) windowEnded() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.window = nil
	l.dueAllLocked()
}

// dueAllLocked makes every event present due and starts the flusher for
// them (l.mu held).
func (l *Live) dueAllLocked() {
	l.due = len(l.events)
	l.startFlusherLocked()
}

// closeWindowLocked stops the deferral window once nothing waits in it
// (l.mu held).
func (l *Live) closeWindowLocked() {
	if l.window != nil && l.persisted == len(l.events) {
		l.window.Stop()
		l.window = nil
	}
}

// writeThrough makes the pending events durable: the calling goroutine
// becomes the flusher unless one is running, whose progress it then
// awaits.
func (l *Live) writeThrough() error {
	if l.s.store == nil {
		return nil
	}
	l.mu.Lock()
	l.due = len(l.events)
	own := !l.flushing && l.persisted < len(l.events) && l.writeErr.Load() == nil
	l.flushing = l.flushing || own
	l.mu.Unlock()
	if own {
		l.flushLoop()
	}
	_, err := l.flush(context.Background(), false)
	return err
}

func (l *Live) startFlusher() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.startFlusherLocked()
}

// startFlusherLocked starts the write-behind goroutine when there is a
// store, due events and no flusher yet (l.mu held).
func (l *Live) startFlusherLocked() {
	if l.s.store == nil || l.flushing || l.persisted >= l.due || l.writeErr.Load() != nil {
		return
	}
	l.flushing = true
	go l.flushLoop()
}

// flushLoop writes every pending event (deferred ones too) with one
// Store.Append per round until none is due, then exits. A failed write
// stops it for good.
func (l *Live) flushLoop() {
	for {
		batch, ok := l.pending()
		if !ok {
			return
		}
		err := l.write(batch)
		if l.written(len(batch), err) {
			return
		}
		l.awaitRefill(len(batch))
	}
}

// write hands batch to the store: through the bound log when there is
// one, under the session's lease when the store is Fenced.
func (l *Live) write(batch []Event) error {
	if l.log != nil {
		return l.log.append(l.epoch, batch)
	}
	if f, ok := l.s.store.(Fenced); ok {
		return f.AppendFenced(context.Background(), l.header.ID, l.epoch, batch)
	}
	return l.s.store.Append(context.Background(), l.header.ID, batch)
}

// awaitRefill waits, as groupWriter.awaitRefill does, for the appenders
// woken by the last write of n events to add their next ones, so the next
// write carries them all.
func (l *Live) awaitRefill(n int) {
	if n > 1 {
		awaitGrowth(l.pendingCount, n+l.pendingCount())
	}
}

func (l *Live) pendingCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events) - l.persisted
}

// pending returns the events not yet handed to the store; false (and the
// flusher marked gone) when none is due.
func (l *Live) pending() ([]Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.persisted >= l.due || l.writeErr.Load() != nil { // a fence failed the log meanwhile
		l.flushing = false
		l.signal()
		return nil, false
	}
	n := len(l.events) // events are never modified once appended: no copy
	return l.events[l.persisted:n:n], true
}

// written records the outcome of a write of n events and reports whether
// the flusher is done: the write failed, or a lone event was written and
// nothing is pending (awaitRefill would not wait), so the flusher is gone
// in the same step that makes the events durable for flush waiters.
func (l *Live) written(n int, err error) (done bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.flushing = false
		l.failLocked(err)
		return true
	}
	l.persisted += n
	l.closeWindowLocked()
	if n == 1 && l.persisted == len(l.events) {
		l.flushing = false
		done = true
	}
	l.signal()
	return done
}

// failLocked fails the log with err (l.mu held, released while the
// failure hook runs) unless it failed already: later appends are refused,
// the hook hears of the events that will never be durable, then flush
// waiters are woken.
func (l *Live) failLocked(err error) {
	if l.writeErr.Load() != nil {
		l.signal()
		return
	}
	failure := asLogFailed(l.header.ID, err)
	l.writeErr.Store(&failure)
	if report := l.onFailure; report != nil {
		unwritten := l.unwrittenLocked()
		l.reporting = true
		l.mu.Unlock()
		report(unwritten, failure)
		l.mu.Lock()
		l.reporting = false
	}
	l.signal()
}

// fence fails l's log as a write refused with fault.Fenced would, when
// epoch is the lease it writes under and it is still live: its store
// found that lease lost, so nothing more can be written under it.
func (l *Live) fence(epoch Epoch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch != epoch || l.released {
		return
	}
	l.failLocked(fencedError(l.header.ID, epoch))
}

// WriteFailure is the error (wrapping ErrLogFailed) that ended the
// write-behind of l's log, or nil while its writes succeed. Once set it
// stays: every later append is refused with it. It costs one atomic
// load and does not block.
func (l *Live) WriteFailure() error {
	if failure := l.writeErr.Load(); failure != nil {
		return *failure
	}
	return nil
}

// unwrittenLocked is the events that are not durable (l.mu held).
func (l *Live) unwrittenLocked() []Event {
	n := len(l.events)
	return l.events[l.persisted:n:n]
}

// OnWriteFailure registers fn (replacing any earlier one) to learn of the
// write-behind's failure: it is called once, on the goroutine that saw
// the failure, with the events that will never be durable (appended but
// not written; later appends are refused) and the ErrLogFailed error,
// before any flush reports the failure. When the log has failed already,
// fn is called at once. fn must not wait for a flush of the session.
func (l *Live) OnWriteFailure(fn func(unwritten []Event, err error)) {
	l.mu.Lock()
	l.onFailure = fn
	failure, unwritten := l.WriteFailure(), l.unwrittenLocked()
	l.mu.Unlock()
	if failure != nil {
		fn(unwritten, failure)
	}
}

// signal wakes every flush waiter (l.mu held); with none, it costs nothing.
func (l *Live) signal() {
	if l.progress != nil {
		close(l.progress)
		l.progress = nil
	}
}

// flush waits until the events present now are durable, deferred ones
// included (it starts their write); with untilIdle it also waits for the
// flusher goroutine to exit.
func (l *Live) flush(ctx context.Context, untilIdle bool) (bool, error) {
	l.mu.Lock()
	target := len(l.events)
	if l.due < target {
		l.dueAllLocked()
	}
	for {
		if err := l.WriteFailure(); err != nil && !l.reporting {
			l.mu.Unlock()
			return false, err
		}
		if l.persisted >= target && !(untilIdle && l.flushing) && l.writeErr.Load() == nil { // a failure being reported is awaited
			l.mu.Unlock()
			return true, nil
		}
		if l.progress == nil {
			l.progress = make(chan struct{})
		}
		wait := l.progress
		l.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return false, ctx.Err()
		}
		l.mu.Lock()
	}
}

func (l *Live) isReleased() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.released
}

// markReleased refuses later appends; false if already released.
func (l *Live) markReleased() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return false
	}
	l.released = true
	return true
}
