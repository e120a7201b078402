package query

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/session"
)

// countingStore counts List and Inspect calls and can make them fail.
type countingStore struct {
	session.Store
	mu                  sync.Mutex
	lists, inspects     int
	loads               int
	listErr, inspectErr error
}

func (c *countingStore) List(ctx context.Context) ([]session.Header, error) {
	c.mu.Lock()
	c.lists++
	err := c.listErr
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return c.Store.List(ctx)
}

func (c *countingStore) Inspect(ctx context.Context, id string) (*session.Log, error) {
	c.mu.Lock()
	c.inspects++
	err := c.inspectErr
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return c.Store.Inspect(ctx, id)
}

// Load counts the repairing reads (only Sessions.Resume makes them).
func (c *countingStore) Load(ctx context.Context, id string) (*session.Log, error) {
	c.mu.Lock()
	c.loads++
	c.mu.Unlock()
	return c.Store.Load(ctx, id)
}

func (c *countingStore) counts() (lists, inspects int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists, c.inspects
}

// world is a JSONL store (wrapped for counting), the live registry over
// it, and the query over both.
type world struct {
	t        *testing.T
	jsonl    *session.JSONL
	store    *countingStore
	sessions *session.Sessions
	q        *Query
	indexed  Catalog // the warm derived index, opened by the first listing
}

func newWorld(t *testing.T) *world {
	t.Helper()
	jsonl, err := session.OpenJSONL(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, jsonl.Close()) })
	store := &countingStore{Store: jsonl}
	sessions := session.NewSessions(store)
	t.Cleanup(func() { releaseAll(t, sessions) })
	return &world{t: t, jsonl: jsonl, store: store, sessions: sessions, q: New(sessions)}
}

func releaseAll(t *testing.T, sessions *session.Sessions) {
	for _, l := range sessions.List() {
		require.NoError(t, sessions.Release(context.Background(), l))
	}
}

// memoryOnly returns a registry without a store, released at cleanup.
func memoryOnly(t *testing.T) *session.Sessions {
	sessions := session.NewSessions(nil)
	t.Cleanup(func() { releaseAll(t, sessions) })
	return sessions
}

// foreignQuery reads w's store with live records from another registry,
// the only way a live header can disagree with the stored one.
func (w *world) foreignQuery(live *session.Sessions) *Query {
	return &Query{sessions: live, store: w.store}
}

// goLive creates a live session in sessions and appends events to it
// through the registry (seq and time are assigned there).
func goLive(t *testing.T, sessions *session.Sessions, h session.Header, events []session.Event) *session.Live {
	t.Helper()
	l, err := sessions.Create(context.Background(), h, nil)
	require.NoError(t, err)
	for _, e := range events {
		var opts []session.AppendOption
		if string(e.SurfaceOp) == `"append"` {
			opts = append(opts, session.Surface())
		}
		if e.SourceEventSeqs != nil {
			opts = append(opts, session.Sources(e.SourceEventSeqs...))
		}
		_, err := l.Append(e.Type, e.Data, opts...)
		require.NoError(t, err)
	}
	return l
}

func (w *world) goLive(h session.Header, events []session.Event) *session.Live {
	w.t.Helper()
	return goLive(w.t, w.sessions, h, events)
}

func header(id, parent string, createdAt int64) session.Header {
	return session.Header{ID: id, ParentSession: parent, CreatedAt: createdAt}
}

func intPtr(n int) *int { return &n }

func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// ev builds an event; seq is filled in by logOf.
func ev(typ string, data any) session.Event {
	return session.Event{Type: typ, Time: 1_700_000_000_000, Data: rawJSON(data)}
}

func appended(e session.Event) session.Event {
	e.SurfaceOp = json.RawMessage(`"append"`)
	return e
}

func withSources(e session.Event, seqs ...int64) session.Event {
	e.SourceEventSeqs = append([]int64{}, seqs...) // non-nil: present
	return e
}

func replacing(e session.Event, start, end int64) session.Event {
	e.SurfaceOp = json.RawMessage(fmt.Sprintf(`{"op":"replace","start":%d,"end":%d}`, start, end))
	return e
}

// logOf numbers events from 0.
func logOf(events ...session.Event) []session.Event {
	out := make([]session.Event, len(events))
	for i, e := range events {
		e.Seq = int64(i)
		out[i] = e
	}
	return out
}

func userMessage(text string) session.Event {
	return appended(ev("user/message", map[string]any{
		"content": []map[string]string{{"type": "text", "text": text}},
		"source":  map[string]string{"kind": "user"}, "role": "user", "id": "msg-" + text,
	}))
}

// withoutSurface drops e's surfaceOp, which a message event must carry.
func withoutSurface(e session.Event) session.Event {
	e.SurfaceOp = nil
	return e
}

// assistantMessage is an assistant/message event with a valid message.
func assistantMessage(text string) session.Event {
	return appended(ev("assistant/message", map[string]any{"turn": 1, "step": 1, "message": map[string]any{
		"role": "assistant", "content": []map[string]string{{"type": "text", "text": text}},
		"source": map[string]string{"kind": "model", "provider": "p", "model": "m"}, "id": "asst-" + text,
	}}))
}

func descriptorEvent(payload any) session.Event { return ev("subagent/descriptor", payload) }

func descriptorPayload(label string) map[string]any {
	return map[string]any{"version": 1, "provider": "spawn", "label": label}
}

// childEvents are the events the original's authorChild writes.
func childEvents(descriptorData any) []session.Event {
	return logOf(
		ev("turn/start", map[string]int{"turn": 1}),
		userMessage("work"),
		descriptorEvent(descriptorData),
		ev("turn/end", map[string]any{"turn": 1, "reason": map[string]string{"kind": "completed"}}),
	)
}

func (w *world) persist(h session.Header, events []session.Event) {
	w.t.Helper()
	require.NoError(w.t, w.jsonl.Create(context.Background(), h, events))
}

// authorChild persists a child of parent with one descriptor labelled label.
func (w *world) authorChild(id, parent string, createdAt int64, label string) {
	w.t.Helper()
	w.persist(header(id, parent, createdAt), childEvents(descriptorPayload(label)))
}
