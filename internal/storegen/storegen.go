package storegen

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dsh-actors/dsh-actors/internal/jsjson"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// Parent is the id of the session whose children Generate writes.
const Parent = "parent"

// Shape describes a generated store: Sessions logs in all, Children of
// them direct continuable children of Parent (one of the sessions), each
// log holding Turns turns of ten events.
type Shape struct {
	Sessions, Children, Turns int
}

// Generate writes a store of the given shape straight into root's layout
// (no fsync: a fixture) and returns the bytes written. The other sessions
// form families of ten (a root with nine children, each with a
// descriptor), so a trace has a realistic corpus to sort through. The
// children are ChildID(0) … ChildID(Children-1), labelled "child task i".
// Parent and its children are always written: when Children is not less
// than Sessions there are no other sessions (and Children+1 logs in all).
func Generate(root string, shape Shape) (int64, error) {
	cwds := []string{"/work/alpha", "/work/beta", "/work/gamma", "/work/delta"}
	rootTurns, childTurns := encodeEvents(turnsLog(0, shape.Turns)), encodeEvents(turnsLog(2, shape.Turns))
	var written int64
	write := func(h session.Header, body []byte) error {
		n, err := writeLog(root, h, body)
		written += n
		return err
	}
	const base = 1_783_000_000_000
	if err := write(session.Header{ID: Parent, CreatedAt: base, Cwd: cwds[0]}, rootTurns); err != nil {
		return 0, err
	}
	for i := range shape.Children {
		h := session.Header{ID: ChildID(i), ParentSession: Parent, CreatedAt: base + 1 + int64(i%97),
			Cwd: cwds[0], Origin: "subagent", DelegationDepth: 1}
		if err := write(h, childBody(fmt.Sprintf("child task %d", i), childTurns)); err != nil {
			return 0, err
		}
	}
	for i := range shape.Sessions - shape.Children - 1 {
		family := i / 10
		h := session.Header{ID: genID("o", i), CreatedAt: base + int64(i), Cwd: cwds[family%len(cwds)]}
		if i%10 != 0 { // a child of its family's root
			h.ParentSession, h.Origin, h.DelegationDepth = genID("o", family*10), "subagent", 1
		}
		body := rootTurns
		if h.ParentSession != "" {
			body = childBody(fmt.Sprintf("other task %d", i), childTurns)
		}
		if err := write(h, body); err != nil {
			return 0, err
		}
	}
	return written, nil
}

// ChildID is the id Generate gives Parent's i-th child.
func ChildID(i int) string { return genID("c", i) }

func genID(prefix string, i int) string {
	return fmt.Sprintf("%s%07x-0000-4000-8000-%012x", prefix, i, i)
}

// childBody is a continuable child's log after the header:
// descriptor(0), session/end-seed(1), then its turns (encoded, from seq 2).
func childBody(label string, turns []byte) []byte {
	d := map[string]any{"version": 1, "provider": "spawn", "label": label}
	head := encodeEvents([]session.Event{
		{Type: vocab.TypeSubagentDescriptor, Seq: 0, Time: 1_783_000_000_000, Data: rawJSON(d)},
		{Type: vocab.TypeSessionEndSeed, Seq: 1, Time: 1_783_000_000_001, Data: json.RawMessage(`{}`)},
	})
	return append(head, turns...)
}

func rawJSON(v any) json.RawMessage {
	data, err := jsjson.Marshal(v)
	if err != nil {
		panic(err) // the generator's own payloads are valid
	}
	return data
}

// turnsLog is turns ordinary turns of ten events each (~240 bytes per
// event on disk), numbered from first.
func turnsLog(first, turns int) []session.Event {
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 7) + "consectetur adipiscing "
	var events []session.Event
	add := func(typ string, data any, surface bool, sources ...int64) int64 {
		seq := int64(first + len(events))
		e := session.Event{Type: typ, Seq: seq, Time: 1_783_000_000_000 + seq, Data: rawJSON(data)}
		if surface {
			e.SurfaceOp = json.RawMessage(`"append"`)
		}
		if len(sources) > 0 {
			e.SourceEventSeqs = sources
		}
		events = append(events, e)
		return seq
	}
	for turn := 1; turn <= turns; turn++ {
		text := func(s string) []map[string]string { return []map[string]string{{"type": "text", "text": s}} }
		add(vocab.TypeTurnStart, map[string]int{"turn": turn}, false)
		add(vocab.TypeUserMessage, map[string]any{"content": text(filler), "source": map[string]string{"kind": "user"},
			"role": "user", "id": fmt.Sprintf("u%d", turn)}, true)
		add(vocab.TypeStepStart, map[string]int{"turn": turn, "step": 1}, false)
		c1 := add(vocab.TypeAssistantChunk, map[string]any{"turn": turn, "step": 1,
			"chunk": map[string]any{"type": "text-delta", "index": 0, "text": filler[:90]}}, false)
		c2 := add(vocab.TypeAssistantChunk, map[string]any{"turn": turn, "step": 1,
			"chunk": map[string]any{"type": "text-delta", "index": 0, "text": filler[90:]}}, false)
		add(vocab.TypeAssistantMessage, map[string]any{"turn": turn, "step": 1, "message": map[string]any{
			"role": "assistant", "content": text(filler), "id": fmt.Sprintf("a%d", turn),
			"source": map[string]string{"kind": "model", "provider": "mock", "model": "mock"}}}, true, c1, c2)
		call := add(vocab.TypeToolCall, map[string]any{"turn": turn, "step": 1, "callId": fmt.Sprintf("call%d", turn),
			"name": "read", "arguments": `{"path":"README.md"}`}, false)
		add(vocab.TypeToolResult, map[string]any{"turn": turn, "step": 1, "message": map[string]any{
			"source":  map[string]string{"kind": "tool", "callId": fmt.Sprintf("call%d", turn)},
			"content": []map[string]any{{"type": "tool-result", "toolCallId": fmt.Sprintf("call%d", turn), "content": text(filler)}},
			"role":    "user", "id": fmt.Sprintf("r%d", turn)}}, true, call)
		add(vocab.TypeStepEnd, map[string]int{"turn": turn, "step": 1}, false)
		add(vocab.TypeTurnEnd, map[string]any{"turn": turn, "reason": map[string]string{"kind": "completed"}}, false)
	}
	return events
}

// encodeEvents renders events as log lines.
func encodeEvents(events []session.Event) []byte {
	var out []byte
	for _, e := range events {
		line, err := e.MarshalJSON()
		if err != nil {
			panic(err) // the generator's own events are valid
		}
		out = append(append(out, line...), '\n')
	}
	return out
}

// writeLog writes one log file (header line, then body) in the store
// layout and returns its size.
func writeLog(root string, h session.Header, body []byte) (int64, error) {
	path, err := logpath.Path(root, h.Cwd, h.ID)
	if err != nil {
		return 0, err
	}
	line, err := h.MarshalJSON()
	if err != nil {
		return 0, err
	}
	data := append(append(line, '\n'), body...)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, err
	}
	return int64(len(data)), os.WriteFile(path, data, 0o600)
}

// RelistingStore is a store whose every read costs a listing: before every
// Inspect it lists the whole store and reports an id missing from that
// listing as not found, which makes listing D
// children among C sessions cost O(D×C). Inspect blocks on the List, then
// on the wrapped Inspect; every other method is the wrapped store's.
type RelistingStore struct{ session.Store }

// Inspect lists the wrapped store, then inspects id if it was listed and
// returns an error matching session.ErrNotFound otherwise.
func (s RelistingStore) Inspect(ctx context.Context, id string) (*session.Log, error) {
	headers, err := s.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, h := range headers {
		if h.ID == id {
			return s.Store.Inspect(ctx, id)
		}
	}
	return nil, fmt.Errorf("session %q: %w", id, session.ErrNotFound)
}
