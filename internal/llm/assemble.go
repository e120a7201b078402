package llm

import (
	"strconv"
	"strings"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// Assembler folds a chunk stream into the assistant's content blocks, its
// usage and its finish reason. It tolerates streams without block-start or
// block-end; a block-end's block is authoritative and closes its index, and
// later deltas for a closed index are ignored.
type Assembler struct {
	partials map[int]*partial
	order    []int
	usage    *vocab.Usage
	finish   *vocab.FinishReason
}

// partial is one block under assembly.
type partial struct {
	blockType string
	text      strings.Builder
	id        string
	name      string
	args      strings.Builder
	closed    *event.Block
}

// Push folds one chunk in.
func (a *Assembler) Push(c vocab.Chunk) {
	switch c.Type {
	case vocab.ChunkBlockStart:
		a.ensure(c.Index, c.BlockType)
	case vocab.ChunkTextDelta, vocab.ChunkReasoningDelta:
		blockType := event.BlockText
		if c.Type == vocab.ChunkReasoningDelta {
			blockType = event.BlockReasoning
		}
		if p := a.ensure(c.Index, blockType); p.closed == nil {
			p.text.WriteString(c.Text)
		}
	case vocab.ChunkToolCallDelta:
		if p := a.ensure(c.Index, event.BlockToolCall); p.closed == nil {
			p.id = c.ID
			if c.Name != "" {
				p.name = c.Name
			}
			p.args.WriteString(c.ArgumentsDelta)
		}
	case vocab.ChunkBlockEnd:
		if c.Block == nil {
			return
		}
		if p := a.ensure(c.Index, c.Block.Type); p.closed == nil {
			block := *c.Block
			p.closed = &block
		}
	case vocab.ChunkUsage:
		a.usage = c.Usage
	case vocab.ChunkFinish:
		a.finish = c.Finish
	}
}

func (a *Assembler) ensure(index int, blockType string) *partial {
	if p, ok := a.partials[index]; ok {
		return p
	}
	if a.partials == nil {
		a.partials = map[int]*partial{}
	}
	p := &partial{blockType: blockType}
	a.partials[index] = p
	a.order = append(a.order, index)
	return p
}

// Blocks returns every block seen, in the order their indexes first
// appeared; an open block is assembled from its deltas. A tool call whose
// id is unknown or empty gets "call-<index>", so that its result can name
// it (a log needs a non-empty call id).
func (a *Assembler) Blocks() []event.Block {
	blocks := make([]event.Block, 0, len(a.order))
	for _, index := range a.order {
		b := a.partials[index].assemble()
		if call, ok := b.ToolCall(); ok && call.ID == "" {
			call.ID = "call-" + strconv.Itoa(index)
			b = call.Block()
		}
		blocks = append(blocks, b)
	}
	return blocks
}

func (p *partial) assemble() event.Block {
	if p.closed != nil {
		return *p.closed
	}
	switch p.blockType {
	case event.BlockToolCall:
		return event.ToolCallBlock{ID: p.id, Name: p.name, Arguments: p.args.String()}.Block()
	case event.BlockText, event.BlockReasoning:
		return event.Block{Type: p.blockType, Text: p.text.String()}
	}
	raw, _ := marshal(struct { // a string field: cannot fail
		Type string `json:"type"`
	}{p.blockType})
	return event.Block{Type: p.blockType, Raw: raw}
}

// Usage is the usage chunk's, or nil before one arrived.
func (a *Assembler) Usage() *vocab.Usage { return a.usage }

// Finish is the finish chunk's reason, or {kind:"stop"} when the stream
// had none.
func (a *Assembler) Finish() vocab.FinishReason {
	if a.finish == nil {
		return vocab.FinishReason{Kind: vocab.FinishStop}
	}
	return *a.finish
}
