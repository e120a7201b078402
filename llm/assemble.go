package llm

import (
	"strconv"
	"strings"
)

// Assembler folds a chunk stream into the assistant's content blocks, its
// usage and its finish reason. It tolerates streams without block-start or
// block-end; a block-end's block is authoritative and closes its index, and
// later deltas for a closed index are ignored.
type Assembler struct {
	partials map[int]*partial
	order    []int
	usage    *Usage
	finish   *FinishReason
}

// partial is one block under assembly.
type partial struct {
	blockType string
	text      strings.Builder
	id        string
	hasID     bool
	name      string
	args      strings.Builder
	closed    *Block
}

// Push folds one chunk in.
func (a *Assembler) Push(c Chunk) {
	switch c.Type {
	case ChunkBlockStart:
		a.ensure(c.Index, c.BlockType)
	case ChunkTextDelta, ChunkReasoningDelta:
		blockType := BlockText
		if c.Type == ChunkReasoningDelta {
			blockType = BlockReasoning
		}
		if p := a.ensure(c.Index, blockType); p.closed == nil {
			p.text.WriteString(c.Text)
		}
	case ChunkToolCallDelta:
		if p := a.ensure(c.Index, BlockToolCall); p.closed == nil {
			p.id, p.hasID = c.ID, true
			if c.HasName && c.Name != "" {
				p.name = c.Name
			}
			p.args.WriteString(c.ArgumentsDelta)
		}
	case ChunkBlockEnd:
		if p := a.ensure(c.Index, c.Block.Type); p.closed == nil {
			block := c.Block
			p.closed = &block
		}
	case ChunkUsage:
		u := c.Usage
		a.usage = &u
	case ChunkFinish:
		r := c.Reason
		a.finish = &r
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
// id is still unknown or empty gets "call-<index>", so that its result can
// name it.
func (a *Assembler) Blocks() []Block {
	blocks := make([]Block, 0, len(a.order))
	for _, index := range a.order {
		p := a.partials[index]
		b := p.assemble()
		if b.Type == BlockToolCall && b.ID == "" {
			b.ID = "call-" + strconv.Itoa(index)
		}
		blocks = append(blocks, b)
	}
	return blocks
}

func (p *partial) assemble() Block {
	if p.closed != nil {
		return *p.closed
	}
	switch p.blockType {
	case BlockToolCall:
		return ToolCall(p.id, p.name, p.args.String())
	case BlockText, BlockReasoning:
		return Block{Type: p.blockType, Text: p.text.String()}
	}
	raw, _ := marshal(struct { // a string field: cannot fail
		Type string `json:"type"`
	}{p.blockType})
	return Block{Type: p.blockType, Raw: raw}
}

// Usage is the usage chunk's, or nil before one arrived.
func (a *Assembler) Usage() *Usage { return a.usage }

// Finish is the finish chunk's reason, or {kind:"stop"} when the stream
// had none.
func (a *Assembler) Finish() FinishReason {
	if a.finish == nil {
		return FinishReason{Kind: FinishStop}
	}
	return *a.finish
}
