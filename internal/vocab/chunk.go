package vocab

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/jsjson"
)

// Chunk is one streamed piece of a model response, the chunk of an
// assistant/chunk. Type decides which fields it has:
//
//	block-start      {type, index, blockType}
//	text-delta       {type, index, text}
//	reasoning-delta  {type, index, text}
//	tool-call-delta  {type, index, id, name?, argumentsDelta}
//	block-end        {type, index, block}
//	usage            {type, usage}
//	finish           {type, reason, replayState?}
//
// Index counts a response's blocks in the order they open. A chunk of
// another type keeps all of itself in Raw and is written back unchanged.
type Chunk struct {
	Type           string
	Index          int
	BlockType      string          // block-start
	Text           string          // text-delta, reasoning-delta
	ID             string          // tool-call-delta: the call id, "" until known
	Name           string          // tool-call-delta: the tool name once known, else ""
	ArgumentsDelta string          // tool-call-delta
	Block          *event.Block    // block-end: the finished block
	Usage          *Usage          // usage
	Finish         *FinishReason   // finish
	ReplayState    json.RawMessage // finish, optional
	// Raw is a chunk of a type not listed above, as read.
	Raw json.RawMessage
}

// FinishReason is how a model response ended: {kind, failure?}; kind is
// stop, tool-calls, max-tokens, error or aborted, the last two with a
// failure.
type FinishReason struct {
	Kind    string   `json:"kind"`
	Failure *Failure `json:"failure,omitempty"`
}

// The chunk types of assistant/chunk.
const (
	ChunkBlockStart     = "block-start"
	ChunkTextDelta      = "text-delta"
	ChunkReasoningDelta = "reasoning-delta"
	ChunkToolCallDelta  = "tool-call-delta"
	ChunkBlockEnd       = "block-end"
	ChunkUsage          = "usage"
	ChunkFinish         = "finish"
)

// The finish kinds.
const (
	FinishStop      = "stop"
	FinishToolCalls = "tool-calls"
	FinishMaxTokens = "max-tokens"
	FinishError     = "error"
	FinishAborted   = "aborted"
)

// The wire shapes of the chunk types, with their key order.
type (
	blockStartWire struct {
		Type      string `json:"type"`
		Index     int    `json:"index"`
		BlockType string `json:"blockType"`
	}
	deltaWire struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
		Text  string `json:"text"`
	}
	toolDeltaWire struct {
		Type           string  `json:"type"`
		Index          int     `json:"index"`
		ID             string  `json:"id"`
		Name           *string `json:"name,omitempty"`
		ArgumentsDelta string  `json:"argumentsDelta"`
	}
	blockEndWire struct {
		Type  string       `json:"type"`
		Index int          `json:"index"`
		Block *event.Block `json:"block"`
	}
	usageWire struct {
		Type  string `json:"type"`
		Usage *Usage `json:"usage"`
	}
	finishWire struct {
		Type        string          `json:"type"`
		Reason      *FinishReason   `json:"reason"`
		ReplayState json.RawMessage `json:"replayState,omitempty"`
	}
)

// MarshalJSON writes the chunk's shape. A block-end without a block, a
// usage without usage or a finish without a reason is an error.
func (c Chunk) MarshalJSON() ([]byte, error) {
	if b, ok := c.appendDelta(nil); ok {
		return b, nil
	}
	switch c.Type {
	case ChunkBlockStart:
		return jsjson.Marshal(blockStartWire{c.Type, c.Index, c.BlockType})
	case ChunkTextDelta, ChunkReasoningDelta:
		return jsjson.Marshal(deltaWire{c.Type, c.Index, c.Text})
	case ChunkToolCallDelta:
		w := toolDeltaWire{Type: c.Type, Index: c.Index, ID: c.ID, ArgumentsDelta: c.ArgumentsDelta}
		if c.Name != "" {
			w.Name = &c.Name
		}
		return jsjson.Marshal(w)
	case ChunkBlockEnd:
		if c.Block == nil {
			return nil, errors.New("vocab: a block-end chunk needs its block")
		}
		return jsjson.Marshal(blockEndWire{c.Type, c.Index, c.Block})
	case ChunkUsage:
		if c.Usage == nil {
			return nil, errors.New("vocab: a usage chunk needs its usage")
		}
		return jsjson.Marshal(usageWire{c.Type, c.Usage})
	case ChunkFinish:
		if c.Finish == nil {
			return nil, errors.New("vocab: a finish chunk needs its reason")
		}
		return jsjson.Marshal(finishWire{c.Type, c.Finish, c.ReplayState})
	}
	if c.Raw == nil {
		return nil, fmt.Errorf("vocab: unknown chunk type %q", c.Type)
	}
	return c.Raw, nil
}

// appendDelta appends a text, reasoning or tool-call delta to b without
// reflection, as json.Marshal writes it; ok is false (b unchanged) for
// other chunks and for strings that are not valid UTF-8, which
// json.Marshal writes with escapes of its own.
func (c Chunk) appendDelta(b []byte) ([]byte, bool) {
	switch c.Type {
	case ChunkTextDelta, ChunkReasoningDelta:
		if !utf8.ValidString(c.Text) {
			return b, false
		}
		b = appendIndex(b, c.Type, c.Index)
		return append(jsjson.AppendString(append(b, `,"text":`...), c.Text), '}'), true
	case ChunkToolCallDelta:
		if !utf8.ValidString(c.ID) || !utf8.ValidString(c.Name) || !utf8.ValidString(c.ArgumentsDelta) {
			return b, false
		}
		b = jsjson.AppendString(append(appendIndex(b, c.Type, c.Index), `,"id":`...), c.ID)
		if c.Name != "" {
			b = jsjson.AppendString(append(b, `,"name":`...), c.Name)
		}
		return append(jsjson.AppendString(append(b, `,"argumentsDelta":`...), c.ArgumentsDelta), '}'), true
	}
	return b, false
}

// appendIndex appends {"type":typ,"index":index to b.
func appendIndex(b []byte, typ string, index int) []byte {
	b = jsjson.AppendString(append(b, `{"type":`...), typ)
	return strconv.AppendInt(append(b, `,"index":`...), int64(index), 10)
}

// chunkWire holds every member any chunk type has.
type chunkWire struct {
	Type           string          `json:"type"`
	Index          int             `json:"index"`
	BlockType      string          `json:"blockType"`
	Text           string          `json:"text"`
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	ArgumentsDelta string          `json:"argumentsDelta"`
	Block          *event.Block    `json:"block"`
	Usage          *Usage          `json:"usage"`
	Reason         *FinishReason   `json:"reason"`
	ReplayState    json.RawMessage `json:"replayState"`
}

// UnmarshalJSON reads any chunk: a listed type into its fields (a
// block-end without a block, a usage without usage or a finish without a
// reason is an error), any other object into Raw.
func (c *Chunk) UnmarshalJSON(data []byte) error {
	var w chunkWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*c = Chunk{Type: w.Type, Index: w.Index}
	switch w.Type {
	case ChunkBlockStart:
		c.BlockType = w.BlockType
	case ChunkTextDelta, ChunkReasoningDelta:
		c.Text = w.Text
	case ChunkToolCallDelta:
		c.ID, c.Name, c.ArgumentsDelta = w.ID, w.Name, w.ArgumentsDelta
	case ChunkBlockEnd:
		c.Block = w.Block
	case ChunkUsage:
		c.Usage = w.Usage
	case ChunkFinish:
		c.Finish, c.ReplayState = w.Reason, w.ReplayState
	default:
		c.Raw = append(json.RawMessage(nil), data...)
		return nil
	}
	if (w.Type == ChunkBlockEnd && c.Block == nil) || (w.Type == ChunkUsage && c.Usage == nil) ||
		(w.Type == ChunkFinish && c.Finish == nil) {
		return fmt.Errorf("vocab: a %s chunk lacks its payload", w.Type)
	}
	return nil
}
