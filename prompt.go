package dsh

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/durable"
	"github.com/dsh-actors/dsh-actors/internal/strhash"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// SessionSpec asks OpenSession for a top-level session.
type SessionSpec struct {
	// ID names the session (and its agent).
	ID string
	// Cwd is the session's working folder, made (with the folders above
	// it) for a new session; an existing session must have this one.
	Cwd string
	// Resume lets OpenSession resume a session stored under ID; without
	// it a stored ID cannot be started again (fault.AgentStartFailed).
	Resume bool
	// Existing, with Resume, opens only a session live here or stored
	// under ID: an unknown ID fails with fault.QuerySessionNotFound and
	// starts nothing.
	Existing bool
}

// OpenSession makes the top-level session spec.ID live in this runtime:
// the agent live under it already, else (with spec.Resume) the stored
// session resumed, its unrun prompts handed to it first (see
// PromptSession), else (without spec.Existing) a new agent over a new
// session in spec.Cwd, built by Options.NewAgent. A stored session's log
// is read once to check it, then once by the resume (the repairing read). A session that belongs to its continuation owner
// (a continuable child, or a one-shot child while its parent is live) is
// refused with fault.OwnedBySubagent, checked first, whatever its cwd; a
// session whose cwd is not spec.Cwd with fault.CwdConflict, a stored one
// before it is resumed. A concurrent OpenSession or PromptSession of the
// same id is joined. It blocks until the agent is live.
func (r *Runtime) OpenSession(ctx context.Context, spec SessionSpec) error {
	h, err := r.ensureAgent(ctx, spec)
	if err != nil {
		return err
	}
	if cwd := h.Header().Cwd; cwd != spec.Cwd {
		return cwdConflict(spec, cwd)
	}
	return nil
}

// ensureAgent is OpenSession's agent, its cwd not yet compared when it
// was live already or is new. Resolving or making it holds id's prompts
// lock, so that OpenSessions racing for one new id (and a prompt resuming
// it) wait for the first to finish and then find its agent live, instead
// of failing because it was being made.
func (r *Runtime) ensureAgent(ctx context.Context, spec SessionSpec) (*parent.Handle, error) {
	if h := r.actors.Registry().Get(spec.ID); h != nil {
		return h, r.refuseLiveChild(h)
	}
	defer r.prompts.lock(spec.ID).Unlock()
	if h := r.actors.Registry().Get(spec.ID); h != nil {
		return h, r.refuseLiveChild(h)
	}
	if spec.Resume {
		log, err := r.query.ReadSession(ctx, spec.ID)
		switch {
		case err == nil:
			if err := refuseChild(log.Header, log.Events); err != nil {
				return nil, err
			}
			if stored := log.Header.Cwd; stored != spec.Cwd {
				return nil, cwdConflict(spec, stored)
			}
			h, err := r.resumeTopLevel(ctx, spec.ID)
			return r.joinedAgent(spec.ID, h, err)
		case spec.Existing || (!errors.Is(err, fault.QuerySessionNotFound) && !errors.Is(err, session.ErrNotFound)):
			return nil, err
		}
	}
	if err := os.MkdirAll(spec.Cwd, 0o755); err != nil {
		return nil, fmt.Errorf("dsh: failed to ensure project directory %q: %w", spec.Cwd, err)
	}
	h, err := r.actors.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: spec.ID, Cwd: spec.Cwd}})
	return r.joinedAgent(spec.ID, h, err)
}

// cwdConflict is the fault.CwdConflict of spec against a session whose
// cwd is existing ("" for none).
func cwdConflict(spec SessionSpec, existing string) error {
	return fault.New(fault.CwdConflict, fmt.Sprintf("dsh: session %q exists with cwd %q, not %q", spec.ID, existing, spec.Cwd), nil)
}

// PromptSession delivers content from source to the top-level session id
// as its next FIFO turn and returns the accepted message id; it blocks
// until acceptance, not until the turn runs. A session not live here is
// resumed from its log first (a concurrent resume joined). When its store
// has a durable inbox (a JSONL store with Options.DurableAdmission, a
// Postgres store) the prompt is committed to the session's inbox before
// it is acknowledged, and the agent gets the inbox's pending prompts
// (acknowledged before a crash or a stop, or through another process)
// first, oldest first, each once (prompt_inbox.go). On a Postgres store a
// session another process holds, or one live here under a lease this
// process lost (it was paused past the lease's TTL), gets the commit
// only: the process holding it is woken and runs it. A continuable
// child's session is refused with fault.OwnedBySubagent, an unknown id
// with fault.QuerySessionNotFound; on a JSONL store, a session another
// process holds with fault.LeaseHeld. When
// the session's log fails (a full disk), the message is refused, the
// agent leaves the runtime and, after a full disk, later prompts fail
// with an error matching syscall.ENOSPC until the disk has room again.
func (r *Runtime) PromptSession(ctx context.Context, id string, content []event.Block, source event.Source) (string, error) {
	for attempt := 1; ; attempt++ {
		msg := event.UserMessage{Content: content, Source: source, Role: event.RoleUser, ID: inbox.NewMessageID()}
		h, err := r.promptOnce(ctx, id, msg)
		if err == nil {
			return msg.ID, nil
		}
		if attempt == promptAttempts || !leftUnderThePrompt(err) {
			return "", err
		}
		if h != nil {
			select {
			case <-h.Disposed():
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
	}
}

// promptAttempts bounds how often PromptSession tries again when the
// agent it found left the runtime before it took the prompt.
const promptAttempts = 3

// leftUnderThePrompt reports whether err says the agent a prompt was
// meant for left the runtime as the prompt reached it (it was being
// disposed): its inbox had closed, or a resume found it still registered
// and it was gone when asked for. The session is then resumed anew.
func leftUnderThePrompt(err error) bool {
	return errors.Is(err, fault.InboxClosed) || errors.Is(err, fault.AgentExists)
}

// promptOnce is one attempt of PromptSession with msg: the agent it found
// (nil when none) and the outcome. On a store without a durable inbox, an
// agent live here takes msg straight into its inbox: nothing is handed to
// it from a store that the session's prompt lock would order msg with,
// and the lock is taken only when its log failed. Every other attempt
// holds the lock throughout (promptLocked).
func (r *Runtime) promptOnce(ctx context.Context, id string, msg event.UserMessage) (*parent.Handle, error) {
	if r.store.inbox == nil && r.store.leases == nil {
		if err := r.awaitRoom(id); err != nil {
			return nil, err
		}
		if h := r.actors.Registry().Get(id); h != nil {
			if err := r.refuseLiveChild(h); err != nil {
				return h, err
			}
			_, err := h.Post(ctx, msg)
			if err != nil && h.Session().WriteFailure() != nil {
				defer r.prompts.lock(id).Unlock()
				r.leaveFailedLog(ctx, h)
			}
			return h, err
		}
	}
	defer r.prompts.lock(id).Unlock()
	return r.promptLocked(ctx, id, msg)
}

// promptLocked is promptOnce under id's prompt lock: msg admitted to the
// store's durable inbox, if it has one, and delivered to the agent live
// under id, resumed when none is.
func (r *Runtime) promptLocked(ctx context.Context, id string, msg event.UserMessage) (*parent.Handle, error) {
	if err := r.awaitRoom(id); err != nil {
		return nil, err
	}
	in := r.store.inbox
	h, err := r.topLevelAgent(ctx, id)
	if err == nil {
		err = r.requireLease(ctx, h)
	}
	if _, wakes := in.(topLevelWaker); wakes && errors.Is(err, fault.LeaseHeld) {
		return h, admitTopLevel(ctx, in, id, msg) // its holder is woken
	}
	if err != nil {
		return h, err
	}
	if in != nil {
		err = r.admitAndDeliver(ctx, in, h, msg)
	} else {
		_, err = h.Post(ctx, msg)
	}
	if err != nil && h.Session().WriteFailure() != nil {
		r.leaveFailedLog(ctx, h)
	}
	return h, err
}

// leaveFailedLog disposes h, whose log failed, under its session's prompt
// lock: its release fails with the log's error, and it leaves the registry
// all the same. After a full disk its id is kept in fullLogs, so that
// later prompts wait for room (awaitRoom).
func (r *Runtime) leaveFailedLog(ctx context.Context, h *parent.Handle) {
	_ = h.Dispose(ctx)
	if errors.Is(h.Session().WriteFailure(), syscall.ENOSPC) {
		r.fullLogs.add(h.ID())
	}
}

// admitAndDeliver commits msg to h's durable inbox, then hands h every
// prompt pending there in admission order, msg among them. A msg h did
// not take is discarded from the inbox: it must not run at a later
// resume either.
func (r *Runtime) admitAndDeliver(ctx context.Context, in session.DurableInbox, h *parent.Handle, msg event.UserMessage) error {
	if err := admitTopLevel(ctx, in, h.ID(), msg); err != nil {
		return err
	}
	taken, err := r.deliverPending(ctx, in, h, msg.ID)
	if err != nil && !taken {
		_ = in.Discard(ctx, h.ID(), h.Session().Epoch(), []string{msg.ID})
	}
	return err
}

// CancelTurn stops the running turn of the top-level session id live
// here (its turn/end says aborted, cause user), without waiting for the
// turn to end. With keepQueued the messages waiting in its inbox stay
// queued and the next of them starts once the aborted turn has ended, in
// order (the web host's Stop); without, they are discarded unrun (an ACP
// client's cancel). A session another process runs (it holds the lease;
// the store is asked without taking or disturbing it) cannot be stopped
// from here: it is fault.LeaseHeld. Any other session no agent is live
// under here (stored and asleep, or unknown) has nothing to stop: it is
// fault.AgentNotFound, "not attached" as the original says. Either way
// nothing is woken. A continuable child's session, live here or
// elsewhere, is refused with fault.OwnedBySubagent. It blocks only on
// the store, when no agent is live under id here.
func (r *Runtime) CancelTurn(ctx context.Context, id string, keepQueued bool) error {
	h := r.actors.Registry().Get(id)
	if h == nil {
		if err := r.refuseHeldElsewhere(ctx, id); err != nil {
			return err
		}
		return fault.New(fault.AgentNotFound, fmt.Sprintf("dsh: session %q not found (not attached)", id), nil)
	}
	if err := r.refuseLiveChild(h); err != nil {
		return err
	}
	h.Activation().Cancel(agent.CancelCause{Kind: agent.CauseUser}, keepQueued)
	return nil
}

// leaseProbe is a store that tells whether another holder holds a
// session's lease without taking or disturbing it: the JSONL and
// Postgres stores.
type leaseProbe interface {
	// HeldElsewhere reports whether another process (or another store
	// over the same root) holds id's lease now. It blocks on the store.
	HeldElsewhere(ctx context.Context, id string) (bool, error)
}

// refuseHeldElsewhere refuses an operation on the session id, live
// nowhere here, while another process holds its lease: with
// fault.OwnedBySubagent when its log says it is a continuable child (as
// refuseChild), else with fault.LeaseHeld.
func (r *Runtime) refuseHeldElsewhere(ctx context.Context, id string) error {
	probe, ok := r.actors.Sessions().Store().(leaseProbe)
	if !ok {
		return nil
	}
	held, err := probe.HeldElsewhere(ctx, id)
	if err != nil || !held {
		return err
	}
	if log, err := r.query.ReadSession(ctx, id); err == nil {
		if err := refuseChild(log.Header, log.Events); err != nil {
			return err
		}
	}
	return durable.LeaseHeld(id, "another process, which runs it")
}

// Release disposes the top-level agent live here under id and releases
// its session, which stays stored, in order: its continuable descendants
// child-first (as Drain), then its running turn, cancelled (cause
// disposed), and its queued messages, discarded, then the flush of its
// log. A later OpenSession, PromptSession or ResumeAgent picks it up
// again. An id no agent is live under here is left as it is; a
// continuable child's session is refused with fault.OwnedBySubagent. It
// blocks until the agent is disposed.
func (r *Runtime) Release(ctx context.Context, id string) error {
	if err := r.actors.Err(); err != nil {
		return err
	}
	h := r.actors.Registry().Get(id)
	if h == nil {
		return nil
	}
	if err := r.refuseLiveChild(h); err != nil {
		return err
	}
	if err := r.subagents.DrainContinuableDescendants(ctx, []*parent.Handle{h}); err != nil {
		return err
	}
	return h.Dispose(ctx)
}

// topLevelAgent returns the live agent id, resuming it when needed; a
// concurrent resume of the same id is joined.
func (r *Runtime) topLevelAgent(ctx context.Context, id string) (*parent.Handle, error) {
	if h := r.actors.Registry().Get(id); h != nil {
		return h, r.refuseLiveChild(h)
	}
	log, err := r.query.ReadSession(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := refuseChild(log.Header, log.Events); err != nil {
		return nil, err
	}
	h, err := r.resumeTopLevel(ctx, id)
	return r.joinedAgent(id, h, err)
}

// resumeTopLevel resumes the stored top-level session id and, when its
// store admits prompts durably, hands the agent every prompt its inbox
// holds unrun, oldest first, before anything newer. A resume that loses to
// a concurrent one joins the agent that won, which replayed them.
func (r *Runtime) resumeTopLevel(ctx context.Context, id string) (*parent.Handle, error) {
	h, err := r.actors.ResumeAgent(ctx, id, parent.Spec{})
	if err != nil {
		return r.joinLive(id, h, err)
	}
	if r.store.inbox == nil {
		return h, nil
	}
	_, err = r.deliverPending(ctx, r.store.inbox, h, "")
	return h, err
}

// joinedAgent is joinLive's agent, fenced.
func (r *Runtime) joinedAgent(id string, h *parent.Handle, err error) (*parent.Handle, error) {
	h, err = r.joinLive(id, h, err)
	if err != nil {
		return nil, err
	}
	return h, r.refuseLiveChild(h)
}

// joinLive is the result of a start or resume of id (h, err), except that
// fault.AgentExists, a concurrent one having won, yields the agent now
// live under id.
func (r *Runtime) joinLive(id string, h *parent.Handle, err error) (*parent.Handle, error) {
	if errors.Is(err, fault.AgentExists) {
		if live := r.actors.Registry().Get(id); live != nil {
			return live, nil
		}
	}
	return h, err
}

// promptStore is what the store offers prompts to top-level agents, fixed
// at Open and looked up once there rather than on every prompt.
type promptStore struct {
	// inbox is the durable inbox prompts are committed to before they
	// are acknowledged: a JSONL store's in its durable admission mode, a
	// Postgres store's; nil for none.
	inbox session.DurableInbox
	// leases tells whether a lease is still current; nil for a store
	// whose leases cannot be lost while held.
	leases leaseChecker
}

// promptStoreOf is store's promptStore.
func promptStoreOf(store session.Store) promptStore {
	var p promptStore
	if in, ok := session.InboxOf(store); ok {
		p.inbox = in
	}
	p.leases, _ = store.(leaseChecker)
	return p
}

// admitTopLevel commits msg to the durable inbox of the top-level
// session id (From ""): a crash after the acknowledgement leaves it
// pending, and the next resume runs it (deliverPending).
func admitTopLevel(ctx context.Context, in session.DurableInbox, id string, msg event.UserMessage) error {
	body, err := vocab.Encode(msg)
	if err == nil {
		_, err = in.Admit(ctx, id, session.Admission{MessageID: msg.ID, Body: body})
	}
	return err
}

// leaseChecker is a store whose leases can be lost while held (a holder
// paused past its TTL, then taken over) that tells whether one is still
// current: the Postgres store.
type leaseChecker interface {
	// LeaseCurrent reports whether epoch is id's current lease, held and
	// not expired on the store's clock. It blocks on the store.
	LeaseCurrent(ctx context.Context, id string, epoch int64) (bool, error)
}

// requireLease refuses (fault.LeaseHeld) to accept for h when its
// session's lease is no longer the current one: this process was paused
// past the lease's TTL and another took the session over, so h could
// never log a message accepted for it.
func (r *Runtime) requireLease(ctx context.Context, h *parent.Handle) error {
	current, err := r.leaseCurrent(ctx, h)
	if err != nil || current {
		return err
	}
	return durable.LeaseHeld(h.ID(), "another process (this one's lease was taken over)")
}

// leaseCurrent reports whether h's session still holds the current lease.
// A store whose leases cannot be lost while held (the JSONL store's) is
// not asked.
func (r *Runtime) leaseCurrent(ctx context.Context, h *parent.Handle) (bool, error) {
	if r.store.leases == nil {
		return true, nil
	}
	return r.store.leases.LeaseCurrent(ctx, h.ID(), int64(h.Session().Epoch()))
}

// awaitRoom refuses (ENOSPC) a prompt to a session whose log a full disk
// failed while the store's disk still has no room, so that nothing is
// acknowledged that the resumed log could not take; once it has room the
// session may be resumed again.
func (r *Runtime) awaitRoom(id string) error {
	if !r.fullLogs.has(id) {
		return nil
	}
	room := r.roomOnDisk
	if room == nil {
		room = func() bool { return diskHasRoom(r.actors.Sessions().Store()) }
	}
	if !room() {
		return fmt.Errorf(`dsh: session "%s": the disk of its log is still full: %w`, id, syscall.ENOSPC)
	}
	r.fullLogs.remove(id)
	return nil
}

// fullLogSet is the set of sessions whose log a full disk failed. Asking
// it costs one atomic load while it is empty, as it nearly always is.
type fullLogSet struct {
	n  atomic.Int32 // the number of ids in m
	mu sync.Mutex
	m  map[string]bool
}

// add puts id in the set.
func (s *fullLogSet) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]bool{}
	}
	if !s.m[id] {
		s.m[id] = true
		s.n.Add(1)
	}
}

// has reports whether id is in the set.
func (s *fullLogSet) has(id string) bool {
	if s.n.Load() == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id]
}

// remove takes id out of the set.
func (s *fullLogSet) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[id] {
		delete(s.m, id)
		s.n.Add(-1)
	}
}

// refuseLiveChild is refuseChild for a live agent, which is also a
// subagent session while the exact agent that owns it is live under its
// durable parent's id (a one-shot child, say). For an agent nobody owns
// it reads two fields and one atomic.
func (r *Runtime) refuseLiveChild(h *parent.Handle) error {
	if h.Session().HoldsOwnDescriptor() || h.Header().Origin == manager.Origin || r.ownerLive(h) {
		return ownedBySubagent(h.ID())
	}
	return nil
}

// ownerLive reports whether the agent that owns h (Spec.Owner) is h's
// durable parent and is the exact agent live under its id.
func (r *Runtime) ownerLive(h *parent.Handle) bool {
	owner := h.Spec().Owner
	return owner != nil && owner.ID() == h.Header().ParentSession && r.actors.Registry().Get(owner.ID()) == owner
}

// refuseChild is the ownership fence of the top-level operations: a
// session whose header says origin "subagent", or whose own suffix (past
// the fork seed) holds a subagent/descriptor, belongs to its continuation
// owner. A fork merely inheriting an ancestor's descriptor in its seed is
// an ordinary session.
func refuseChild(h session.Header, events []session.Event) error {
	if h.Origin == manager.Origin {
		return ownedBySubagent(h.ID)
	}
	own := events[min(h.OwnStart(), len(events)):]
	if slices.ContainsFunc(own, func(e session.Event) bool { return e.Type == vocab.TypeSubagentDescriptor }) {
		return ownedBySubagent(h.ID)
	}
	return nil
}

// ownedBySubagent is the fault.OwnedBySubagent refusal of session id.
func ownedBySubagent(id string) error {
	return fault.New(fault.OwnedBySubagent, fmt.Sprintf("dsh: session %q is owned by subagent routing", id), nil)
}

// stripedLock is a fixed set of mutexes picked by a hash of an id.
type stripedLock [64]sync.Mutex

// lock locks id's stripe and returns it, for the caller to unlock. It
// hashes id in place (FNV-1a) and allocates nothing.
func (l *stripedLock) lock(id string) *sync.Mutex {
	m := &l[strhash.FNV1a(id)%uint32(len(l))]
	m.Lock()
	return m
}
