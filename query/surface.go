package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER.
const maxSafeInteger = 1<<53 - 1

// replaceOp is a positional replacement of the surface nodes start..end.
type replaceOp struct{ start, end int64 }

// foldSurface replays the surface operations of a contiguous log and
// classifies every event. The error message is the original's.
func foldSurface(events []session.Event) ([]Surface, error) {
	var f SurfaceFolder
	if err := f.Fold(events); err != nil {
		return nil, err
	}
	return classify(events, f.nodes, f.shadowed), nil
}

// SurfaceFolder replays a log's surface operations incrementally: the
// model-visible surface is the seqs of the messages appended and not
// replaced since. The zero value has folded nothing. It is not safe for
// concurrent use.
type SurfaceFolder struct {
	nodes    []int64
	shadowed map[int64]bool
	folded   int
}

// Fold folds the events of a contiguous log (seq i at index i) that it has
// not folded yet: events must extend the log folded before. It stops at
// the first event that breaks a surface rule, returning the original's
// message for it; that event and the later ones stay unfolded.
func (f *SurfaceFolder) Fold(events []session.Event) error {
	if f.shadowed == nil {
		f.shadowed = map[int64]bool{}
	}
	for ; f.folded < len(events); f.folded++ {
		ev := events[f.folded]
		if ev.Seq != int64(f.folded) {
			return fmt.Errorf("session event seq %d is not contiguous; expected %d", ev.Seq, f.folded)
		}
		removed, err := applySurfaceEvent(&f.nodes, ev, events)
		if err != nil {
			return err
		}
		for _, seq := range removed {
			f.shadowed[seq] = true
		}
	}
	return nil
}

// Current is the seqs of the surface's messages, in surface order. It is
// shared with the folder: do not modify it; a later Fold may change it.
func (f *SurfaceFolder) Current() []int64 { return f.nodes[:len(f.nodes):len(f.nodes)] }

func classify(events []session.Event, nodes []int64, shadowed map[int64]bool) []Surface {
	classes := make([]Surface, len(events))
	for i := range classes {
		classes[i] = surfaceLogOnly
		if shadowed[int64(i)] {
			classes[i] = surfaceShadowed
		}
	}
	for _, seq := range nodes {
		classes[seq] = surfaceCurrent
	}
	return classes
}

// applySurfaceEvent validates ev against the current nodes and applies it,
// returning the seqs a replacement removed.
func applySurfaceEvent(nodes *[]int64, ev session.Event, events []session.Event) ([]int64, error) {
	op, isAppend, err := surfaceOpOf(ev)
	if err != nil || (op == nil && !isAppend) {
		return nil, err
	}
	if isAppend {
		if err := checkProvenance(ev, nil); err != nil {
			return nil, err
		}
		*nodes = append(*nodes, ev.Seq)
		return nil, nil
	}
	startIdx, endIdx, err := replacementRange(*nodes, *op)
	if err != nil {
		return nil, err
	}
	removed := slices.Clone((*nodes)[startIdx : endIdx+1])
	if err := checkProvenance(ev, removed); err != nil {
		return nil, err
	}
	if err := checkToolResultRewrite(ev, removed, events); err != nil {
		return nil, err
	}
	*nodes = slices.Replace(*nodes, startIdx, endIdx+1, ev.Seq)
	return removed, nil
}

// surfaceOpOf checks the event-local rules and returns its operation:
// a replacement, an append, or neither (a non-surface event).
func surfaceOpOf(ev session.Event) (op *replaceOp, isAppend bool, err error) {
	// The message-producing types (vocab.OnSurface) must carry a surfaceOp;
	// every other type must carry neither surfaceOp nor sourceEventSeqs.
	// steering/message is an older mid-turn user message (read as
	// user/message); logs that carry it put it on the surface.
	if !vocab.OnSurface(ev.Type) {
		if ev.SurfaceOp != nil {
			return nil, false, fmt.Errorf("session event %q is not surface-eligible and cannot carry surfaceOp", ev.Type)
		}
		if ev.SourceEventSeqs != nil {
			return nil, false, fmt.Errorf("session event %q is not surface-eligible and cannot carry sourceEventSeqs", ev.Type)
		}
		return nil, false, nil
	}
	raw := bytes.TrimSpace(ev.SurfaceOp)
	switch {
	case ev.SurfaceOp == nil:
		return nil, false, fmt.Errorf("session event %q is surface-eligible and requires a surfaceOp marker", ev.Type)
	case string(raw) == `"append"`:
		return nil, true, nil
	case len(raw) == 0 || raw[0] != '{':
		return nil, false, fmt.Errorf("session event %q carries an invalid surfaceOp", ev.Type)
	}
	rop, ok := parseReplaceOp(raw)
	if !ok {
		return nil, false, fmt.Errorf("session event %q carries an invalid replace surfaceOp", ev.Type)
	}
	return &rop, false, nil
}

// parseReplaceOp accepts exactly {"op":"replace","start":S,"end":E} with
// non-negative safe-integer seqs.
func parseReplaceOp(raw []byte) (replaceOp, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || len(fields) != 3 {
		return replaceOp{}, false
	}
	var kind string
	if json.Unmarshal(fields["op"], &kind) != nil || kind != "replace" {
		return replaceOp{}, false
	}
	start, okStart := eventSeq(fields["start"])
	end, okEnd := eventSeq(fields["end"])
	return replaceOp{start, end}, okStart && okEnd
}

// eventSeq reads a JSON number that is a non-negative safe integer
// (1.0 counts, as it does in JavaScript).
func eventSeq(raw json.RawMessage) (int64, bool) {
	t := strings.TrimSpace(string(raw))
	if t == "" || (t[0] != '-' && (t[0] < '0' || t[0] > '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f > maxSafeInteger || f != math.Trunc(f) {
		return 0, false
	}
	return int64(f), true
}

func replacementRange(nodes []int64, op replaceOp) (startIdx, endIdx int, err error) {
	startIdx = slices.Index(nodes, op.start)
	if startIdx < 0 {
		return 0, 0, fmt.Errorf("surface replace: start seq %d not found in surface", op.start)
	}
	endIdx = slices.Index(nodes, op.end)
	if endIdx < 0 {
		return 0, 0, fmt.Errorf("surface replace: end seq %d not found in surface", op.end)
	}
	if startIdx > endIdx {
		return 0, 0, fmt.Errorf("surface replace: start seq %d (index %d) is after end seq %d (index %d)",
			op.start, startIdx, op.end, endIdx)
	}
	return startIdx, endIdx, nil
}

// checkProvenance validates sourceEventSeqs: distinct non-negative safe
// integers citing earlier events, non-empty except on assistant/message,
// and covering every node a replacement shadows.
func checkProvenance(ev session.Event, shadowed []int64) error {
	sources := map[int64]bool{}
	if ev.SourceEventSeqs != nil {
		if len(ev.SourceEventSeqs) == 0 && ev.Type != vocab.TypeAssistantMessage {
			return fmt.Errorf("sourceEventSeqs must not be empty except on assistant/message")
		}
		nonEarlier := int64(-1)
		for _, src := range ev.SourceEventSeqs {
			if src < 0 || src > maxSafeInteger {
				return fmt.Errorf("session event %q sourceEventSeqs must densely contain non-negative safe integers", ev.Type)
			}
			sources[src] = true
			if nonEarlier < 0 && src >= ev.Seq {
				nonEarlier = src
			}
		}
		if len(sources) != len(ev.SourceEventSeqs) {
			return fmt.Errorf("sourceEventSeqs must not contain duplicates")
		}
		if nonEarlier >= 0 {
			return fmt.Errorf("sourceEventSeqs must reference earlier events: %d >= current seq %d", nonEarlier, ev.Seq)
		}
	}
	var missing []string
	for _, seq := range shadowed {
		if !sources[seq] {
			missing = append(missing, strconv.FormatInt(seq, 10))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("surface replace: sourceEventSeqs must include every shadowed surface node; missing %s",
			strings.Join(missing, ", "))
	}
	return nil
}

// checkToolResultRewrite restricts a tool/result replacement to rewriting
// the inner content of exactly one current tool/result.
func checkToolResultRewrite(ev session.Event, shadowed []int64, events []session.Event) error {
	if ev.Type != vocab.TypeToolResult {
		return nil
	}
	if len(shadowed) != 1 {
		return fmt.Errorf("tool/result surface replacement must rewrite exactly one current node")
	}
	original := events[shadowed[0]]
	if original.Type != vocab.TypeToolResult {
		return fmt.Errorf("tool/result surface replacement must target a current tool/result")
	}
	before, okBefore := withoutResultContent(original.Data)
	after, okAfter := withoutResultContent(ev.Data)
	if !okBefore || !okAfter || !reflect.DeepEqual(before, after) {
		return fmt.Errorf("tool/result surface replacement may change only content")
	}
	return nil
}

// withoutResultContent decodes a tool/result payload and blanks the inner
// content of its first result block, the one part a rewrite may change.
func withoutResultContent(data json.RawMessage) (map[string]any, bool) {
	var payload map[string]any
	if json.Unmarshal(data, &payload) != nil {
		return nil, false
	}
	message, ok := payload["message"].(map[string]any)
	if !ok {
		return nil, false
	}
	blocks, ok := message["content"].([]any)
	if !ok {
		return nil, false
	}
	if len(blocks) > 0 {
		first, _ := blocks[0].(map[string]any)
		blanked := map[string]any{}
		for k, v := range first {
			blanked[k] = v
		}
		blanked["content"] = nil
		blocks = append([]any{blanked}, blocks[1:]...)
	}
	message["content"] = blocks
	return payload, true
}
