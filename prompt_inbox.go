package dsh

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// Prompts to top-level sessions through a durable inbox.
//
// On a store with a durable inbox (a JSONL store in its durable admission
// mode, a Postgres store) PromptSession commits the message to the
// session's inbox before it returns, and the agent gets its inbox's
// pending prompts, oldest first, each once (handedPrompts), whenever
// they are delivered: by that prompt, by a resume, by a wake.
//
// On a store whose inbox wakes other processes (Postgres) any process
// accepts a prompt for a session that another one holds, or that this one
// holds under a lease it lost (it was paused past its TTL): the commit
// wakes every process on the top-level wake channel, the holder hands the
// prompt to its agent, and the append of the prompt's user/message event
// claims it under the holder's lease, so it runs once whoever accepted
// it. A wake for a session no one holds live takes it over here (the
// lease decides between processes) and runs what is pending.

// topLevelWaker is a durable inbox that wakes the holder of a top-level
// session when a prompt is admitted to it (the Postgres store's).
type topLevelWaker interface {
	// ListenTopLevel calls wake with the id of each top-level session
	// woken, until ctx is done (then it returns ctx's error); listening is
	// called each time it (re)starts listening.
	ListenTopLevel(ctx context.Context, listening func(), wake func(id string)) error
	// Orphaned reports whether id has pending messages and no live holder.
	Orphaned(ctx context.Context, id string) (bool, error)
}

// handedPrompts records, per top-level session, the pending prompts
// handed to its live agent and not yet claimed, so that every delivery
// hands each prompt once.
type handedPrompts struct {
	mu sync.Mutex
	by map[string]handedTo
}

// handedTo is the prompts handed to one agent.
type handedTo struct {
	agent *parent.Handle
	ids   map[string]bool
}

// of returns the ids handed to h (empty when h is not the agent they
// were handed to: a resumed agent gets every pending prompt again).
func (p *handedPrompts) of(h *parent.Handle) map[string]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if got, ok := p.by[h.ID()]; ok && got.agent == h {
		return got.ids
	}
	return map[string]bool{}
}

// keep records ids as the prompts handed to h that are still pending.
func (p *handedPrompts) keep(h *parent.Handle, ids map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(ids) == 0 {
		delete(p.by, h.ID())
		return
	}
	if p.by == nil {
		p.by = map[string]handedTo{}
	}
	p.by[h.ID()] = handedTo{agent: h, ids: ids}
}

// deliverPending hands h, live here, every prompt of its session's inbox
// not handed to it yet, oldest first, and reports whether the one named
// mine (when not "") is among those it holds. The caller holds the
// session's prompts lock.
func (r *Runtime) deliverPending(ctx context.Context, in session.DurableInbox, h *parent.Handle, mine string) (bool, error) {
	pending, err := in.Pending(ctx, h.ID())
	if err != nil {
		return false, err
	}
	handed := r.handed.of(h)
	still := make(map[string]bool, len(pending))
	defer func() { r.handed.keep(h, still) }()
	for _, p := range pending {
		if !handed[p.MessageID] {
			msg, err := vocab.DecodeAs[event.UserMessage](vocab.TypeUserMessage, p.Body)
			if err != nil {
				return still[mine], fmt.Errorf(`dsh: pending prompt "%s" of session "%s": %w`, p.MessageID, h.ID(), err)
			}
			if _, err := h.Post(ctx, msg); err != nil {
				return still[mine], err
			}
		}
		still[p.MessageID] = true
	}
	return still[mine], nil
}

// topLevelWakes is the listener of a store's top-level wakes.
type topLevelWakes struct {
	stop context.CancelFunc // nil: the store does not wake
	done sync.WaitGroup
	mu   sync.Mutex
	ids  []string        // woken and not yet handled, oldest first
	in   map[string]bool // the ids in ids
	work chan struct{}   // a value while ids is not empty
}

// startWakes listens for the top-level wakes of the runtime's store, when
// it has them, until close: each is handled (wakeTopLevel) one at a time
// on a goroutine of its own, a wake for a session already waiting to be
// handled coalescing with it.
func (r *Runtime) startWakes() {
	in, ok := session.InboxOf(r.actors.Sessions().Store())
	if !ok {
		return
	}
	waker, ok := in.(topLevelWaker)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &r.wakes
	w.stop, w.in, w.work = cancel, map[string]bool{}, make(chan struct{}, 1)
	w.done.Go(func() { _ = waker.ListenTopLevel(ctx, func() {}, w.push) })
	w.done.Go(func() {
		for {
			select {
			case <-w.work:
			case <-ctx.Done():
				return
			}
			for id, ok := w.pop(); ok && ctx.Err() == nil; id, ok = w.pop() {
				r.wakeTopLevel(ctx, in, waker, id)
			}
		}
	})
}

// push queues id unless it waits already. It does not block.
func (w *topLevelWakes) push(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.in[id] {
		return
	}
	w.in[id] = true
	w.ids = append(w.ids, id)
	select {
	case w.work <- struct{}{}:
	default:
	}
}

// pop takes the oldest queued id.
func (w *topLevelWakes) pop() (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.ids) == 0 {
		return "", false
	}
	id := w.ids[0]
	w.ids = w.ids[1:]
	delete(w.in, id)
	return id, true
}

// stopWakes stops listening and waits for the wake being handled. It is
// idempotent.
func (r *Runtime) stopWakes() {
	if r.wakes.stop != nil {
		r.wakes.stop()
		r.wakes.done.Wait()
	}
}

// wakeTopLevel handles a wake of the top-level session id: its agent live
// here under a current lease gets its pending prompts; otherwise, when no
// one holds it live and prompts are pending, it is taken over here (a
// stale agent of a lost lease disposed first), which hands them over. A
// session another process holds is left to it.
func (r *Runtime) wakeTopLevel(ctx context.Context, in session.DurableInbox, waker topLevelWaker, id string) {
	defer r.prompts.lock(id).Unlock()
	err := r.runWoken(ctx, in, waker, id)
	if err != nil && ctx.Err() == nil {
		r.actors.Logger().Warn("dsh: a woken top-level session did not get its pending prompts", slog.String("session", id), slog.Any("err", err))
	}
}

// runWoken is wakeTopLevel's work, under id's prompts lock.
func (r *Runtime) runWoken(ctx context.Context, in session.DurableInbox, waker topLevelWaker, id string) error {
	h := r.actors.Registry().Get(id)
	if h != nil {
		current, err := r.leaseCurrent(ctx, h)
		if err != nil || current {
			if err == nil {
				_, err = r.deliverPending(ctx, in, h, "")
			}
			return err
		}
	}
	orphaned, err := waker.Orphaned(ctx, id)
	if err != nil || !orphaned {
		return err
	}
	if h != nil {
		_ = h.Dispose(ctx) // its lease is lost: its appends are fenced
	}
	_, err = r.resumeTopLevel(ctx, id)
	if errors.Is(err, fault.LeaseHeld) {
		return nil // another process took it over first
	}
	return err
}
