package event

import (
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/internal/jsjson"
)

// Text returns a single text block holding s.
func Text(s string) []Block { return []Block{{Type: BlockText, Text: s}} }

// ToolCallBlock is the assistant content block of a tool call:
// {type:"tool-call", id, name, arguments}; Arguments is the model's raw
// argument string.
type ToolCallBlock struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// toolCallWire is a tool-call block with its type, in the original's order.
type toolCallWire struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Block returns the content block of the call.
func (c ToolCallBlock) Block() Block {
	raw, _ := jsjson.Marshal(toolCallWire{BlockToolCall, c.ID, c.Name, c.Arguments}) // strings only: cannot fail
	return Block{Type: BlockToolCall, Raw: raw}
}

// ToolCall returns the call a tool-call block holds, and false for any
// other block (or a tool-call block whose id, name or arguments is not a
// string).
func (b Block) ToolCall() (ToolCallBlock, bool) {
	if b.Type != BlockToolCall || b.Raw == nil {
		return ToolCallBlock{}, false
	}
	var w struct {
		ID, Name, Arguments *string
	}
	if json.Unmarshal(b.Raw, &w) != nil || w.ID == nil || w.Name == nil || w.Arguments == nil {
		return ToolCallBlock{}, false
	}
	return ToolCallBlock{ID: *w.ID, Name: *w.Name, Arguments: *w.Arguments}, true
}

// TextOf joins the text of the text blocks in content.
func TextOf(content []Block) string {
	n := 0
	for _, b := range content {
		if b.Type == BlockText {
			n += len(b.Text)
		}
	}
	buf := make([]byte, 0, n)
	for _, b := range content {
		if b.Type == BlockText {
			buf = append(buf, b.Text...)
		}
	}
	return string(buf)
}
