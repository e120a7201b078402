package stress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/dsh-actors/dsh-actors/actors/activation"
	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/dsh-actors/dsh-actors/subagent"
)

var errorsIs = errors.Is

// epoch is one recorded start/end pair.
type epoch struct {
	info       manager.RunInfo
	start, end int // positions in the lifecycle order; end -1 until ended
}

// recorder keeps what the invariants need: lifecycle edges in order, the
// latest handle of every agent, accepted and discarded message ids.
type recorder struct {
	mu        sync.Mutex
	more      chan struct{}
	seq       int
	open      int               // epochs started and not ended
	runs      map[string]*epoch // by run id
	order     []*epoch          // by start
	parentOf  map[string]string // child id → parent id
	children  []string          // in first-start order
	handles   map[string]*parent.Handle
	registry  func(string) *parent.Handle
	accepted  map[string]string // message id → child id
	discarded map[string]bool
	lost      map[string]bool // reported lost to a failed log
	disorder  []string        // lifecycle violations seen while recording
}

func newRecorder() *recorder {
	return &recorder{
		more: make(chan struct{}), runs: map[string]*epoch{}, parentOf: map[string]string{},
		handles: map[string]*parent.Handle{}, accepted: map[string]string{}, discarded: map[string]bool{},
		lost: map[string]bool{},
	}
}

// lifecycle records subagent/start and subagent/end.
func (r *recorder) lifecycle(ev subagent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	switch e := ev.(type) {
	case *subagent.StartEvent:
		ep := &epoch{info: e.RunInfo, start: r.seq, end: -1}
		r.runs[e.RunID] = ep
		r.order = append(r.order, ep)
		r.open++
		if _, known := r.parentOf[e.ID]; !known {
			r.parentOf[e.ID] = e.ParentID
			r.children = append(r.children, e.ID)
		}
	case *subagent.EndEvent:
		ep := r.runs[e.RunID]
		if ep == nil || ep.end >= 0 {
			r.disorder = append(r.disorder, fmt.Sprintf("%s of run %s without an open start", vocab.TypeSubagentEnd, e.RunID))
			return
		}
		ep.end = r.seq
		r.open--
	}
	close(r.more)
	r.more = make(chan struct{})
}

// quiet waits until no epoch is resident, or ctx is done.
func (r *recorder) quiet(ctx context.Context) error {
	for {
		r.mu.Lock()
		open, more := r.open, r.more
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

// agentEvent records handles (agent/created) and discards.
func (r *recorder) agentEvent(e parent.Event) {
	switch e.Type {
	case parent.EventCreated:
		r.mu.Lock()
		lookup := r.registry
		r.mu.Unlock()
		if lookup == nil {
			return
		}
		if h := lookup(e.AgentID); h != nil && h.Incarnation() == e.Incarnation {
			r.handle(h)
		}
	case inbox.Discard:
		r.mu.Lock()
		r.discarded[e.MessageID] = true
		r.mu.Unlock()
	}
}

func (r *recorder) handle(h *parent.Handle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handles[h.ID()] = h
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
func (r *recorder) reachable(child string) (string, *parent.Handle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	node := child
	for {
		parentID := r.parentOf[node]
		h := r.handles[parentID]
		if _, isChild := r.parentOf[parentID]; !isChild || (h != nil && r.registry(h.ID()) == h) {
			return node, h
		}
		node = parentID
	}
}

// randomResident returns a random child that is live now, or nil.
func (r *recorder) randomResident(intn func(int) int) *parent.Handle {
	r.mu.Lock()
	defer r.mu.Unlock()
	var live []*parent.Handle
	for _, id := range r.children {
		if h := r.handles[id]; h != nil && r.registry(h.ID()) == h {
			live = append(live, h)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return live[intn(len(live))]
}

// check fills the report's counts and violations after the runtime
// closed: accounting, delivery, lifecycle order, leftovers and the store.
func (s *run) check(report *Report, root string) {
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
	if n := len(s.rt.Registry().List()); n != 0 {
		add("%d agents left after close", n)
	}
	for _, v := range r.disorder {
		add("%s", v)
	}
	s.checkLifecycle(add)
	store, err := session.OpenJSONL(root)
	if err != nil {
		add("store does not open: %v", err)
		return
	}
	defer store.Close()
	logged := s.checkDelivery(store, add)
	report.Logged = len(logged)
	for id := range r.accepted {
		if r.lost[id] && !logged[id] {
			report.Lost++
		}
	}
	report.Discarded = len(r.accepted) - len(logged) - report.Lost
	s.checkStore(store, report, add)
}

// checkLifecycle: every start ended, and every child's epoch ended before
// the epoch of its parent that was resident when the child started.
func (s *run) checkLifecycle(add func(string, ...any)) {
	r := s.rec
	for _, ep := range r.order {
		if ep.end < 0 {
			add("%s of %s (run %s) never ended", vocab.TypeSubagentStart, ep.info.ID, ep.info.RunID)
			continue
		}
		owner := r.ownerEpoch(ep)
		if owner != nil && owner.end < ep.end {
			add("child-first order broken: %s ended after its parent %s", ep.info.ID, owner.info.ID)
		}
	}
}

// ownerEpoch is the parent's epoch resident when ep started, if the parent
// is a continuable child.
func (r *recorder) ownerEpoch(ep *epoch) *epoch {
	for _, candidate := range r.order {
		if candidate.info.ID == ep.info.ParentID && candidate.start < ep.start && (candidate.end < 0 || candidate.end > ep.start) {
			return candidate
		}
	}
	return nil
}

// checkDelivery: every accepted follow-up reached its child's log, or was
// discarded, or was reported lost to a failed log; never logged as well,
// never none of them. It returns the ids found logged.
func (s *run) checkDelivery(store session.Store, add func(string, ...any)) map[string]bool {
	r := s.rec
	logged := map[string]bool{}
	byChild := map[string][]string{}
	for id, child := range r.accepted {
		byChild[child] = append(byChild[child], id)
	}
	for child, ids := range byChild {
		inLog, err := messageIDs(store, child)
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

func messageIDs(store session.Store, id string) (map[string]bool, error) {
	log, err := store.Inspect(context.Background(), id)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, e := range log.Events {
		if e.Type == vocab.TypeUserMessage {
			var msg event.UserMessage
			if json.Unmarshal(e.Data, &msg) == nil {
				ids[msg.ID] = true
			}
		}
	}
	return ids, nil
}

// checkStore: every session is stored, and every child is listed by its
// parent's catalog without diagnostics.
func (s *run) checkStore(store session.Store, report *Report, add func(string, ...any)) {
	headers, err := store.List(context.Background())
	if err != nil {
		add("store listing failed: %v", err)
		return
	}
	report.Sessions = len(headers)
	q := query.New(session.NewSessions(store))
	listed := map[string]bool{}
	for _, h := range headers {
		entries, err := query.ListChildren(context.Background(), q, h.ID)
		if err != nil {
			add("list_agents of %s failed: %v", h.ID, err)
			continue
		}
		for _, e := range entries {
			if e.Kind != query.KindChild {
				add("list_agents of %s: %s is a %s diagnostic", h.ID, e.ID, e.Reason)
			}
			listed[e.ID] = true
		}
	}
	for _, child := range s.rec.children {
		if !listed[child] {
			add("child %s is not listed by its parent", child)
		}
	}
	if missing := len(s.rec.children) + s.cfg.Forests - len(headers); missing > 0 {
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
	if r.Message == activation.LostMessage {
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
