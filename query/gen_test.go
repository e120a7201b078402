package query

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/session"
)

// The reference store of issue 2 (C = 2,000 sessions, ~24 MB, D = 200
// children of one parent) for timing `dsh-actors list` from a cold process:
//
//	go test ./query -run TestGenerateReferenceStore -args -gen.store DIR
//	time dsh-actors list --store DIR parent
var (
	genStore    = flag.String("gen.store", "", "write the reference session store to this folder")
	genSessions = flag.Int("gen.sessions", 2000, "sessions in the generated store")
	genChildren = flag.Int("gen.children", 200, "direct continuable children of the session \"parent\"")
)

func TestGenerateReferenceStore(t *testing.T) {
	if *genStore == "" {
		t.Skip("pass -args -gen.store DIR to write the reference store")
	}
	require.NoError(t, os.MkdirAll(*genStore, 0o700))
	bytes, err := generateStore(*genStore, storeShape{sessions: *genSessions, children: *genChildren, turns: 5})
	require.NoError(t, err)
	t.Logf("wrote %d sessions (%d children of %q), %.1f MB, to %s",
		*genSessions, *genChildren, genParent, float64(bytes)/1e6, *genStore)
}

// genParent is the id of the parent whose children the benchmarks list.
const genParent = "parent"

// storeShape describes a generated store: sessions logs in all, children
// of them direct continuable children of genParent (one of the sessions),
// each log holding turns turns of ten events.
type storeShape struct {
	sessions, children, turns int
}

// generateStore writes a store of the given shape straight into root's
// layout (no fsync: it is a fixture) and returns the bytes written. The
// other sessions form families of ten: a root with nine children, each
// with a descriptor, so the trace has a realistic corpus to sort through.
func generateStore(root string, shape storeShape) (int64, error) {
	cwds := []string{"/work/alpha", "/work/beta", "/work/gamma", "/work/delta"}
	rootTurns, childTurns := encodeEvents(turnsLog(0, shape.turns)), encodeEvents(turnsLog(2, shape.turns))
	var written int64
	write := func(h session.Header, body []byte) error {
		n, err := writeLog(root, h, body)
		written += n
		return err
	}
	const base = 1_783_000_000_000
	if err := write(session.Header{ID: genParent, CreatedAt: base, Cwd: cwds[0]}, rootTurns); err != nil {
		return 0, err
	}
	for i := range shape.children {
		h := session.Header{ID: genID("c", i), ParentSession: genParent, CreatedAt: base + 1 + int64(i%97),
			Cwd: cwds[0], Origin: "subagent", DelegationDepth: 1}
		if err := write(h, childBody(fmt.Sprintf("child task %d", i), childTurns)); err != nil {
			return 0, err
		}
	}
	for i := range shape.sessions - shape.children - 1 {
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

func genID(prefix string, i int) string {
	return fmt.Sprintf("%s%07x-0000-4000-8000-%012x", prefix, i, i)
}

// childBody is a continuable child's log after the header:
// descriptor(0), session/end-seed(1), then its turns (encoded, from seq 2).
func childBody(label string, turns []byte) []byte {
	d := map[string]any{"version": 1, "provider": "spawn", "label": label}
	head := encodeEvents([]session.Event{
		{Type: "subagent/descriptor", Seq: 0, Time: 1_783_000_000_000, Data: rawJSON(d)},
		{Type: "session/end-seed", Seq: 1, Time: 1_783_000_000_001, Data: json.RawMessage(`{}`)},
	})
	return append(head, turns...)
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
		add("turn/start", map[string]int{"turn": turn}, false)
		add("user/message", map[string]any{"content": text(filler), "source": map[string]string{"kind": "user"},
			"role": "user", "id": fmt.Sprintf("u%d", turn)}, true)
		add("step/start", map[string]int{"turn": turn, "step": 1}, false)
		c1 := add("assistant/chunk", map[string]any{"turn": turn, "step": 1,
			"chunk": map[string]any{"type": "text-delta", "index": 0, "text": filler[:90]}}, false)
		c2 := add("assistant/chunk", map[string]any{"turn": turn, "step": 1,
			"chunk": map[string]any{"type": "text-delta", "index": 0, "text": filler[90:]}}, false)
		add("assistant/message", map[string]any{"turn": turn, "step": 1, "message": map[string]any{
			"role": "assistant", "content": text(filler), "id": fmt.Sprintf("a%d", turn),
			"source": map[string]string{"kind": "model", "provider": "mock", "model": "mock"}}}, true, c1, c2)
		call := add("tool/call", map[string]any{"turn": turn, "step": 1, "callId": fmt.Sprintf("call%d", turn),
			"name": "read", "arguments": `{"path":"README.md"}`}, false)
		add("tool/result", map[string]any{"turn": turn, "step": 1, "message": map[string]any{
			"source":  map[string]string{"kind": "tool", "callId": fmt.Sprintf("call%d", turn)},
			"content": []map[string]any{{"type": "tool-result", "toolCallId": fmt.Sprintf("call%d", turn), "content": text(filler)}},
			"role":    "user", "id": fmt.Sprintf("r%d", turn)}}, true, call)
		add("step/end", map[string]int{"turn": turn, "step": 1}, false)
		add("turn/end", map[string]any{"turn": turn, "reason": map[string]string{"kind": "completed"}}, false)
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
	path, err := session.LogPath(root, h.Cwd, h.ID)
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
