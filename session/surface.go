package session

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
)

// checkSurface refuses the log of id, read from path, when its events
// break the surface rules, as the original does when it builds a Session
// from a log it loads: each event is replayed as the Session's seed, and
// the first that breaks a rule is named with the rule's message.
func checkSurface(id string, events []Event, path string) error {
	var f SurfaceFolder
	if err := f.Fold(events); err != nil {
		return corruptf(path, 0, `stored session "%s" failed validation: invalid seed event at index %d: %s`,
			id, f.folded, err.Error())
	}
	return nil
}

// replaceOp is a positional replacement of the surface nodes start..end.
type replaceOp struct{ start, end int64 }

// SurfaceFolder replays a log's surface operations incrementally: the
// model-visible surface is the seqs of the messages appended and not
// replaced since. The zero value has folded nothing. It is not safe for
// concurrent use.
type SurfaceFolder struct {
	nodes  []int64
	folded int
}

// Fold folds the events of a contiguous log (seq i at index i) that it has
// not folded yet: events must extend the log folded before. It stops at
// the first event that breaks a surface rule, returning the original's
// message for it; that event and the later ones stay unfolded.
func (f *SurfaceFolder) Fold(events []Event) error {
	for ; f.folded < len(events); f.folded++ {
		ev := events[f.folded]
		if ev.Seq != int64(f.folded) {
			return fmt.Errorf("session event seq %d is not contiguous; expected %d", ev.Seq, f.folded)
		}
		if err := applySurfaceEvent(&f.nodes, ev, events); err != nil {
			return err
		}
	}
	return nil
}

// Current is the seqs of the surface's messages, in surface order. It is
// shared with the folder: do not modify it; a later Fold may change it.
func (f *SurfaceFolder) Current() []int64 { return f.nodes[:len(f.nodes):len(f.nodes)] }

// applySurfaceEvent validates ev against the current nodes and applies it.
func applySurfaceEvent(nodes *[]int64, ev Event, events []Event) error {
	op, isAppend, err := surfaceOpOf(ev)
	if err != nil || (op == nil && !isAppend) {
		return err
	}
	if isAppend {
		if err := checkProvenance(ev, nil); err != nil {
			return err
		}
		*nodes = append(*nodes, ev.Seq)
		return nil
	}
	startIdx, endIdx, err := replacementRange(*nodes, *op)
	if err != nil {
		return err
	}
	removed := (*nodes)[startIdx : endIdx+1]
	if err := checkProvenance(ev, removed); err != nil {
		return err
	}
	if err := checkToolResultRewrite(ev, removed, events); err != nil {
		return err
	}
	*nodes = slices.Replace(*nodes, startIdx, endIdx+1, ev.Seq)
	return nil
}

// surfaceOpOf checks the event-local rules and returns its operation:
// a replacement, an append, or neither (a non-surface event).
func surfaceOpOf(ev Event) (op *replaceOp, isAppend bool, err error) {
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
func checkProvenance(ev Event, shadowed []int64) error {
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
func checkToolResultRewrite(ev Event, shadowed []int64, events []Event) error {
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
