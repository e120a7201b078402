package stress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
)

var errorsIs = errors.Is

// lostMessage is the message of the error line the runtime logs for each
// accepted message a failed log lost (with its messageId).
const lostMessage = "actors: accepted message lost: its session log failed"

// epoch is one resident period of a continuable child: ChildStarted, then
// ChildEnded.
type epoch struct {
	id, parentID string
	start, end   int // positions in the lifecycle order; end -1 until ended
}

// recorder keeps what the invariants need: the children's epochs in
// order, the forests' handles, accepted, discarded and lost message ids.
type recorder struct {
	mu        sync.Mutex
	more      chan struct{}
	seq       int
	resident  map[string]*epoch // the open epoch of each child
	order     []*epoch          // by start
	parentOf  map[string]string // child id → parent id
	children  []string          // in first-start order
	roots     map[string]*dsh.Handle
	agent     func(string) (*dsh.Handle, bool) // the live agent under an id
	accepted  map[string]string                // message id → child id
	discarded map[string]bool
	lost      map[string]bool // reported lost to a failed log
	disorder  []string        // lifecycle violations seen while recording
}

func newRecorder() *recorder {
	return &recorder{
		more: make(chan struct{}), resident: map[string]*epoch{}, parentOf: map[string]string{},
		roots: map[string]*dsh.Handle{}, accepted: map[string]string{}, discarded: map[string]bool{},
		lost: map[string]bool{},
	}
}

// notice records a child's epochs (ChildStarted, ChildEnded) and
// discarded messages.
func (r *recorder) notice(n dsh.Notice) {
	switch {
	case n.Kind == dsh.ChildStarted:
		r.started(n.SessionID, n.ParentSessionID)
	case n.Kind == dsh.ChildEnded:
		r.ended(n.SessionID)
	case n.Kind == dsh.MessageLeft && n.Discarded:
		r.mu.Lock()
		r.discarded[n.MessageID] = true
		r.mu.Unlock()
	}
}

func (r *recorder) started(id, parentID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	if r.resident[id] != nil {
		r.disorder = append(r.disorder, fmt.Sprintf("child %s started while resident", id))
	}
	ep := &epoch{id: id, parentID: parentID, start: r.seq, end: -1}
	r.resident[id] = ep
	r.order = append(r.order, ep)
	if _, known := r.parentOf[id]; !known {
		r.parentOf[id] = parentID
		r.children = append(r.children, id)
	}
	r.wake()
}

func (r *recorder) ended(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	ep := r.resident[id]
	if ep == nil {
		r.disorder = append(r.disorder, fmt.Sprintf("child %s ended without an open start", id))
		return
	}
	ep.end = r.seq
	delete(r.resident, id)
	r.wake()
}

// wake tells the waiters (quiet, randomChild) that something changed; r.mu
// is held.
func (r *recorder) wake() {
	close(r.more)
	r.more = make(chan struct{})
}

// quiet waits until no child is resident, or ctx is done.
func (r *recorder) quiet(ctx context.Context) error {
	for {
		r.mu.Lock()
		open, more := len(r.resident), r.more
		r.mu.Unlock()
		if open == 0 {
			return nil
		}
		select {
		case <-more:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (r *recorder) root(h *dsh.Handle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.roots[h.ID()] = h
}

func (r *recorder) accept(childID, messageID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.accepted[messageID] = childID
}

// randomChild waits for a known child and returns it.
func (r *recorder) randomChild(ctx context.Context, intn func(int) int) string {
	for {
		r.mu.Lock()
		if n := len(r.children); n > 0 {
			child := r.children[intn(n)]
			r.mu.Unlock()
			return child
		}
		more := r.more
		r.mu.Unlock()
		select {
		case <-more:
		case <-ctx.Done():
			return ""
		}
	}
}

// reachable returns the deepest node on child's path to its forest root
// whose parent is live now (child itself when its parent is), with that
// parent's handle. Sending there either reaches child or wakes an ancestor
// of it, so that later steps can reach further down.
func (r *recorder) reachable(child string) (string, *dsh.Handle) {
	path, root := r.pathUp(child)
	for i, node := range path {
		if i+1 < len(path) {
			if h, live := r.agent(path[i+1]); live {
				return node, h
			}
			continue
		}
		return node, root
	}
	return child, nil
}

// pathUp is child and its ancestors up to (without) the forest root, in
// that order, with the root's handle.
func (r *recorder) pathUp(child string) ([]string, *dsh.Handle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	path := []string{child}
	for {
		parentID, isChild := r.parentOf[path[len(path)-1]]
		if _, parentIsChild := r.parentOf[parentID]; !isChild || !parentIsChild {
			return path, r.roots[parentID]
		}
		path = append(path, parentID)
	}
}

// liveChildren are the known children live now.
func (r *recorder) liveChildren() []string {
	r.mu.Lock()
	children := append([]string(nil), r.children...)
	r.mu.Unlock()
	var live []string
	for _, id := range children {
		if _, ok := r.agent(id); ok {
			live = append(live, id)
		}
	}
	return live
}

// randomResident returns the handle of a random child live now, or nil.
func (r *recorder) randomResident(intn func(int) int) *dsh.Handle {
	live := r.liveChildren()
	if len(live) == 0 {
		return nil
	}
	h, _ := r.agent(live[intn(len(live))])
	return h
}

// check fills the report's counts and violations after the runtime
// closed: accounting, delivery, lifecycle order, leftovers and the store,
// which it reads through a runtime opened on it afresh.
func (s *run) check(ctx context.Context, report *Report, root string) {
	r := s.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	report.Activations, report.Children = len(r.order), len(r.children)
	add := func(format string, args ...any) {
		report.Violations = append(report.Violations, fmt.Sprintf(format, args...))
	}
	if sent := report.Accepted + report.Rejected; sent != s.cfg.Followups {
		add("accepted %d + rejected %d = %d, sent %d", report.Accepted, report.Rejected, sent, s.cfg.Followups)
	}
	for _, id := range append(append([]string(nil), r.children...), rootIDs(r.roots)...) {
		if _, live := r.agent(id); live {
			add("agent %s left live after close", id)
		}
	}
	for _, v := range r.disorder {
		add("%s", v)
	}
	s.checkLifecycle(add)
	stored, err := dsh.Open(dsh.Options{Dir: root, NoIndex: true})
	if err != nil {
		add("store does not open: %v", err)
		return
	}
	defer func() {
		if err := stored.Close(); err != nil {
			add("store does not close: %v", err)
		}
	}()
	logged := s.checkDelivery(ctx, stored, add)
	report.Logged = len(logged)
	for id := range r.accepted {
		if r.lost[id] && !logged[id] {
			report.Lost++
		}
	}
	report.Discarded = len(r.accepted) - len(logged) - report.Lost
	s.checkStore(ctx, stored, report, add)
}

func rootIDs(roots map[string]*dsh.Handle) []string {
	ids := make([]string, 0, len(roots))
	for id := range roots {
		ids = append(ids, id)
	}
	return ids
}

// checkLifecycle: every epoch ended, and every child's epoch ended before
// the epoch of its parent that was resident when the child started.
func (s *run) checkLifecycle(add func(string, ...any)) {
	r := s.rec
	for _, ep := range r.order {
		if ep.end < 0 {
			add("epoch of child %s started and never ended", ep.id)
			continue
		}
		owner := r.ownerEpoch(ep)
		if owner != nil && owner.end < ep.end {
			add("child-first order broken: %s ended after its parent %s", ep.id, owner.id)
		}
	}
}

// ownerEpoch is the parent's epoch resident when ep started, if the parent
// is a continuable child.
func (r *recorder) ownerEpoch(ep *epoch) *epoch {
	for _, candidate := range r.order {
		if candidate.id == ep.parentID && candidate.start < ep.start && (candidate.end < 0 || candidate.end > ep.start) {
			return candidate
		}
	}
	return nil
}

// checkDelivery: every accepted follow-up reached its child's log, or was
// discarded, or was reported lost to a failed log; never logged as well,
// never none of them. It returns the ids found logged.
func (s *run) checkDelivery(ctx context.Context, stored *dsh.Runtime, add func(string, ...any)) map[string]bool {
	r := s.rec
	logged := map[string]bool{}
	byChild := map[string][]string{}
	for id, child := range r.accepted {
		byChild[child] = append(byChild[child], id)
	}
	for child, ids := range byChild {
		inLog, err := messageIDs(ctx, stored, child)
		if err != nil {
			add("child %s log unreadable: %v", child, err)
			continue
		}
		for _, id := range ids {
			switch {
			case inLog[id] && r.discarded[id]:
				add("follow-up %s to %s was both logged and discarded", id, child)
			case inLog[id] && r.lost[id]:
				add("follow-up %s to %s was both logged and reported lost", id, child)
			case inLog[id]:
				logged[id] = true
			case r.discarded[id] && r.lost[id]:
				add("follow-up %s to %s was both discarded and reported lost", id, child)
			case !r.discarded[id] && !r.lost[id]:
				add("follow-up %s to %s was accepted but neither logged, discarded nor reported lost", id, child)
			}
		}
	}
	return logged
}

// messageIDs are the ids of the user messages in the stored log of id.
func messageIDs(ctx context.Context, stored *dsh.Runtime, id string) (map[string]bool, error) {
	history, err := stored.History(ctx, id)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, e := range history.Events {
		var msg event.UserMessage
		if e.Type == "user/message" && json.Unmarshal(e.Data, &msg) == nil {
			ids[msg.ID] = true
		}
	}
	return ids, nil
}

// checkStore: every session is stored, and every child is listed by its
// parent's catalog without diagnostics.
func (s *run) checkStore(ctx context.Context, stored *dsh.Runtime, report *Report, add func(string, ...any)) {
	sessions, err := stored.Sessions(ctx)
	if err != nil {
		add("store listing failed: %v", err)
		return
	}
	report.Sessions = len(sessions)
	listed := map[string]bool{}
	for _, session := range sessions {
		id := session.Header.ID
		children, err := stored.Children(ctx, id)
		if err != nil {
			add("list_agents of %s failed: %v", id, err)
			continue
		}
		for _, c := range children {
			if c.Diagnostic != "" {
				add("list_agents of %s: %s is a %s diagnostic", id, c.ID, c.Diagnostic)
			}
			listed[c.ID] = true
		}
	}
	for _, child := range s.rec.children {
		if !listed[child] {
			add("child %s is not listed by its parent", child)
		}
	}
	if missing := len(s.rec.children) + s.cfg.Forests - len(sessions); missing > 0 {
		add("%d sessions missing from the store", missing)
	}
}

// lostRecorder is the runtime's log handler: it passes every record on
// and notes the message id of each "accepted message lost" error line.
type lostRecorder struct {
	slog.Handler
	rec *recorder
}

// Enabled is true for the lost-message lines whatever the wrapped handler
// wants, so that they are always counted.
func (h lostRecorder) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelError || h.Handler.Enabled(ctx, level)
}

// Handle notes a lost message, then hands r to the wrapped handler if it
// wants its level.
func (h lostRecorder) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == lostMessage {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "messageId" {
				h.rec.noteLost(a.Value.String())
			}
			return true
		})
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs keeps the recorder around the derived handler.
func (h lostRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return lostRecorder{Handler: h.Handler.WithAttrs(attrs), rec: h.rec}
}

// WithGroup keeps the recorder around the derived handler.
func (h lostRecorder) WithGroup(name string) slog.Handler {
	return lostRecorder{Handler: h.Handler.WithGroup(name), rec: h.rec}
}

func (r *recorder) noteLost(messageID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost[messageID] = true
}
