package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/dsh-actors/dsh-actors/agent"
)

// payload validates one method's request object field by field, collecting
// every issue instead of stopping at the first. Unknown keys are ignored.
type payload struct {
	fields map[string]json.RawMessage
	issues []Issue
}

func readPayload(raw json.RawMessage) *payload {
	p := &payload{}
	if err := json.Unmarshal(raw, &p.fields); err != nil || p.fields == nil {
		p.fail(nil, "invalid_type", "expected object")
	}
	return p
}

func (p *payload) fail(path []any, code, message string) {
	if path == nil {
		path = []any{}
	}
	p.issues = append(p.issues, Issue{Code: code, Path: path, Message: message})
}

// raw returns the field's JSON, or nil when it is absent or null.
func (p *payload) raw(name string) json.RawMessage {
	v, ok := p.fields[name]
	if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return nil
	}
	return v
}

// sessionID reads a required non-empty string.
func (p *payload) sessionID(name string) string {
	if p.fields == nil {
		return ""
	}
	v := p.raw(name)
	if v == nil {
		p.fail([]any{name}, "invalid_type", "required")
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		p.fail([]any{name}, "invalid_type", "expected string")
		return ""
	}
	if s == "" {
		p.fail([]any{name}, "too_small", "expected a non-empty string")
	}
	return s
}

// optionalInt reads an absent field as nil, else an integer >= min. JSON
// null is not absent: like the original's z.number().optional(), it is an
// invalid type.
func (p *payload) optionalInt(name string, min int64) *int64 {
	v, ok := p.fields[name]
	if !ok {
		return nil
	}
	if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		p.fail([]any{name}, "invalid_type", "expected number, received null")
		return nil
	}
	var f float64
	if json.Unmarshal(v, &f) != nil {
		p.fail([]any{name}, "invalid_type", "expected number")
		return nil
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		p.fail([]any{name}, "invalid_type", "expected integer")
		return nil
	}
	if int64(f) < min {
		p.fail([]any{name}, "too_small", fmt.Sprintf("expected a number >= %d", min))
		return nil
	}
	n := int64(f)
	return &n
}

// content reads seed 004's ContentBlock[]: z.array(z.looseObject({type:
// z.string()})), an array (possibly empty) of objects each with a string
// type; other keys are allowed. agent.Block carries only a block's type and
// a string text, so other keys (and a text that is not a string) do not
// reach the runtime. The result is never nil when there is no issue.
func (p *payload) content(name string) []agent.Block {
	if p.fields == nil {
		return nil
	}
	v := p.raw(name)
	if v == nil {
		p.fail([]any{name}, "invalid_type", "required")
		return nil
	}
	var items []json.RawMessage
	if !isJSONArray(v) || json.Unmarshal(v, &items) != nil {
		p.fail([]any{name}, "invalid_type", "expected array")
		return nil
	}
	blocks := make([]agent.Block, 0, len(items))
	for i, item := range items {
		if b, ok := p.block([]any{name, i}, item); ok {
			blocks = append(blocks, b)
		}
	}
	return blocks
}

// block reads one loose {type: string} object.
func (p *payload) block(path []any, item json.RawMessage) (agent.Block, bool) {
	var fields map[string]json.RawMessage
	if !isJSONObject(item) || json.Unmarshal(item, &fields) != nil {
		p.fail(path, "invalid_type", "expected object")
		return agent.Block{}, false
	}
	var typ string
	if raw, ok := fields["type"]; !ok || !isJSONString(raw) || json.Unmarshal(raw, &typ) != nil {
		p.fail(append(path, "type"), "invalid_type", "expected string")
		return agent.Block{}, false
	}
	b := agent.Block{Type: typ}
	if raw, ok := fields["text"]; ok && isJSONString(raw) {
		_ = json.Unmarshal(raw, &b.Text)
	}
	return b, true
}

func isJSONArray(v json.RawMessage) bool  { return firstByte(v) == '[' }
func isJSONObject(v json.RawMessage) bool { return firstByte(v) == '{' }
func isJSONString(v json.RawMessage) bool { return firstByte(v) == '"' }

func firstByte(v json.RawMessage) byte {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return 0
	}
	return v[0]
}
