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

// content reads a non-empty array of text blocks.
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
	if json.Unmarshal(v, &items) != nil {
		p.fail([]any{name}, "invalid_type", "expected array")
		return nil
	}
	if len(items) == 0 {
		p.fail([]any{name}, "too_small", "expected at least one content block")
		return nil
	}
	blocks := make([]agent.Block, 0, len(items))
	for i, item := range items {
		if b, ok := p.textBlock([]any{name, i}, item); ok {
			blocks = append(blocks, b)
		}
	}
	return blocks
}

func (p *payload) textBlock(path []any, item json.RawMessage) (agent.Block, bool) {
	var block struct {
		Type *string `json:"type"`
		Text *string `json:"text"`
	}
	if json.Unmarshal(item, &block) != nil || block.Type == nil {
		p.fail(path, "invalid_type", "expected a content block with a string type")
		return agent.Block{}, false
	}
	if *block.Type != "text" || block.Text == nil {
		p.fail(path, "invalid_value", `expected {"type":"text","text":string}`)
		return agent.Block{}, false
	}
	return agent.Block{Type: "text", Text: *block.Text}, true
}
