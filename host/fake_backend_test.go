package host

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/session"
)

// fakeBackend is a scriptable in-memory Backend that records every call.
type fakeBackend struct {
	mu           sync.Mutex
	summaries    []sessionSummary
	transcripts  map[string]transcript
	catalogs     map[string][]catalogEntry
	catalogErr   error
	readErr      error
	promptErr    error
	createErr    error
	followupErr  error
	searchErr    error
	searchPage   index.Page
	onFollowup   func()
	live         map[string]bool
	elsewhere    map[string]bool // agents another process runs
	panicMessage string
	calls        []string
	followups    []followupCall
	subscribers  map[int]func(notice)
	nextSub      int
}

type followupCall struct {
	Parent  string
	Child   string
	Content []event.Block
	Source  event.Source
}

type fakeAgent string

func (a fakeAgent) SessionID() string { return string(a) }

func newFakeBackend() *fakeBackend {
	return &fakeBackend{
		transcripts: map[string]transcript{},
		catalogs:    map[string][]catalogEntry{},
		live:        map[string]bool{},
		subscribers: map[int]func(notice){},
	}
}

func (f *fakeBackend) record(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	if f.panicMessage != "" {
		panic(f.panicMessage)
	}
}

// callLog returns a copy of the recorded calls.
func (f *fakeBackend) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeBackend) CancelSession(ctx context.Context, id string) error {
	f.record("CancelSession %s", id)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.transcripts[id]; !ok && !f.live[id] {
		return wrap(codeSessionNotFound, fmt.Errorf("no session %s", id))
	}
	return ctx.Err()
}

func (f *fakeBackend) ListSessions(ctx context.Context) ([]sessionSummary, error) {
	f.record("ListSessions")
	return slices.Clone(f.summaries), ctx.Err()
}

func (f *fakeBackend) CreateSession(ctx context.Context, req createRequest) (sessionSummary, error) {
	f.record("CreateSession %s %s %v", req.ID, req.Cwd, req.Requested)
	if f.createErr != nil {
		return sessionSummary{}, f.createErr
	}
	s := sessionSummary{ID: req.ID, Cwd: req.Cwd, CreatedAt: 1000, UpdatedAt: 1000, Live: true}
	f.mu.Lock()
	f.summaries = append(f.summaries, s)
	f.live[s.ID] = true
	f.mu.Unlock()
	return s, nil
}

func (f *fakeBackend) ReadSession(ctx context.Context, id string) (transcript, error) {
	f.record("ReadSession %s", id)
	if err := ctx.Err(); err != nil {
		return transcript{}, wrap(codeCancelled, err)
	}
	if f.readErr != nil {
		return transcript{}, f.readErr
	}
	t, ok := f.transcripts[id]
	if !ok {
		return transcript{}, wrap(codeSessionNotFound, fmt.Errorf("session %q not found", id))
	}
	return t, nil
}

func (f *fakeBackend) PromptSession(ctx context.Context, id string, content []event.Block, source event.Source) (string, error) {
	f.record("PromptSession %s %s/%s", id, source.Kind, source.RPCID)
	if f.promptErr != nil {
		return "", f.promptErr
	}
	return "message-" + id, nil
}

func (f *fakeBackend) ListChildren(ctx context.Context, parentID string) ([]catalogEntry, error) {
	f.record("ListChildren %s", parentID)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.catalogErr != nil {
		return nil, f.catalogErr
	}
	entries, ok := f.catalogs[parentID]
	if !ok {
		return nil, wrap(codeSessionNotFound, fmt.Errorf("session %q not found", parentID))
	}
	return entries, nil
}

func (f *fakeBackend) LiveAgent(id string) (liveAgent, bool) {
	f.record("LiveAgent %s", id)
	f.mu.Lock()
	defer f.mu.Unlock()
	return fakeAgent(id), f.live[id]
}

// LiveElsewhere finds the agents set in elsewhere.
func (f *fakeBackend) LiveElsewhere(_ context.Context, id string) (liveAgent, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.elsewhere[id] {
		return nil, false, nil
	}
	f.calls = append(f.calls, "LiveElsewhere "+id)
	return fakeAgent(id), true, nil
}

func (f *fakeBackend) Followup(ctx context.Context, parent liveAgent, childID string, content []event.Block, source event.Source) (string, error) {
	f.record("Followup %s %s", parent.SessionID(), childID)
	f.mu.Lock()
	f.followups = append(f.followups, followupCall{parent.SessionID(), childID, content, source})
	f.mu.Unlock()
	if f.onFollowup != nil {
		f.onFollowup()
	}
	if f.followupErr != nil {
		return "", f.followupErr
	}
	return "message-1", nil
}

func (f *fakeBackend) Subscribe(fn func(notice)) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.nextSub
	f.nextSub++
	f.subscribers[id] = fn
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.subscribers, id)
	}
}

// emit delivers notices to every subscriber, in order.
func (f *fakeBackend) emit(notices ...notice) {
	f.mu.Lock()
	subs := make([]func(notice), 0, len(f.subscribers))
	for _, fn := range f.subscribers {
		subs = append(subs, fn)
	}
	f.mu.Unlock()
	for _, n := range notices {
		for _, fn := range subs {
			fn(n)
		}
	}
}

// message builds a counted user/message or assistant/message event.
func message(seq int64, typ, text string, sources ...int64) session.Event {
	data, _ := json.Marshal(map[string]any{"content": event.Text(text)})
	return session.Event{Type: typ, Seq: seq, Time: 1000 + seq, Data: data,
		SurfaceOp: json.RawMessage(`"append"`), SourceEventSeqs: sources}
}

// plain builds an uncounted event (turn/start, chunk, …).
func plain(seq int64, typ string) session.Event {
	return session.Event{Type: typ, Seq: seq, Time: 1000 + seq, Data: json.RawMessage(`{}`)}
}

func (f *fakeBackend) SearchSessions(ctx context.Context, req index.SearchRequest) (index.Page, error) {
	f.record("SearchSessions %q %d %d", req.Phrase, req.Limit, req.Offset)
	if err := ctx.Err(); err != nil {
		return index.Page{}, wrap(codeCancelled, err)
	}
	if f.searchErr != nil {
		return index.Page{}, f.searchErr
	}
	return f.searchPage, nil
}
