package llm

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// Wire shapes of one streamed chat.completion.chunk. Fields the harness
// does not read are not declared; a string field of another JSON type is
// ignored, as the original's typeof checks ignore it.
type (
	wireChunk struct {
		Choices []wireChoice `json:"choices"`
		Usage   *wireUsage   `json:"usage"`
	}
	wireChoice struct {
		Delta        *wireDelta `json:"delta"`
		FinishReason looseText  `json:"finish_reason"`
	}
	wireDelta struct {
		Content          looseText          `json:"content"`
		ReasoningContent looseText          `json:"reasoning_content"`
		Reasoning        looseText          `json:"reasoning"`
		ToolCalls        []wireToolCallPart `json:"tool_calls"`
	}
	wireToolCallPart struct {
		Index    *float64      `json:"index"`
		ID       looseText     `json:"id"`
		Function *wireFunction `json:"function"`
	}
	wireFunction struct {
		Name      looseText `json:"name"`
		Arguments looseText `json:"arguments"`
	}
	wireUsage struct {
		PromptTokens            int                  `json:"prompt_tokens"`
		CompletionTokens        int                  `json:"completion_tokens"`
		PromptCacheHitTokens    *int                 `json:"prompt_cache_hit_tokens"`
		PromptTokensDetails     *wireCachedTokens    `json:"prompt_tokens_details"`
		CompletionTokensDetails *wireReasoningTokens `json:"completion_tokens_details"`
	}
	wireCachedTokens struct {
		CachedTokens *int `json:"cached_tokens"`
	}
	wireReasoningTokens struct {
		ReasoningTokens *int `json:"reasoning_tokens"`
	}
)

// looseText is a JSON value read as text when it is a string; Set says so.
// Any other value (null, a number) leaves it unset.
type looseText struct {
	Text string
	Set  bool
}

// UnmarshalJSON keeps a string and ignores every other value.
func (t *looseText) UnmarshalJSON(data []byte) error {
	if len(data) == 0 || data[0] != '"' {
		*t = looseText{}
		return nil
	}
	if s, ok := plainString(data); ok {
		*t = looseText{Text: s, Set: true}
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	*t = looseText{Text: s, Set: true}
	return nil
}

// plainString is the text of a JSON string literal (quotes included, as
// the decoder has already checked it) that needs no decoding: no escape and
// valid UTF-8. Others go to the decoder, which also replaces invalid UTF-8.
func plainString(literal []byte) (string, bool) {
	inner := literal[1 : len(literal)-1]
	if bytes.IndexByte(inner, '\\') >= 0 || !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}

// openBlock is one content block being streamed.
type openBlock struct {
	index  int
	kind   string
	text   bytes.Buffer
	callID string
	name   string
}

// translator turns the data payloads of one response into Chunks: one
// block per content, per reasoning and per tool-call index, opened in the
// order they first appear; the finish reason and the latest usage are held
// until [DONE], which closes every block in opening order.
type translator struct {
	blocks    []*openBlock
	text      *openBlock
	reasoning *openBlock
	tools     map[float64]*openBlock
	finish    *vocab.FinishReason
	usage     *vocab.Usage
	out       []vocab.Chunk
}

// push translates one payload. It returns the chunks it produced (valid
// until the next call) and whether the payload was [DONE]. A payload that
// is not a JSON chunk fails with MALFORMED_RESPONSE.
func (t *translator) push(payload []byte) ([]vocab.Chunk, bool, error) {
	t.out = t.out[:0]
	if string(payload) == doneSentinel {
		t.done()
		return t.out, true, nil
	}
	var chunk wireChunk
	if err := decodeChunk(payload, &chunk); err != nil {
		return nil, false, newError("malformed SSE payload: "+prefix(string(payload), 120), CodeMalformedResponse, err)
	}
	for i := range chunk.Choices {
		t.choice(&chunk.Choices[i])
	}
	if chunk.Usage != nil {
		u := chunk.Usage.usage()
		t.usage = &u
	}
	return t.out, false, nil
}

// choice translates one choice: reasoning first (reasoning_content, or
// reasoning as Ollama and vLLM name it), then text, then each tool-call
// part.
func (t *translator) choice(c *wireChoice) {
	if d := c.Delta; d != nil {
		r := d.ReasoningContent
		if !r.Set || r.Text == "" {
			r = d.Reasoning
		}
		if r.Set && r.Text != "" {
			t.reasoning = t.delta(t.reasoning, event.BlockReasoning, vocab.ChunkReasoningDelta, r.Text)
		}
		if s := d.Content; s.Set && s.Text != "" {
			t.text = t.delta(t.text, event.BlockText, vocab.ChunkTextDelta, s.Text)
		}
		for i := range d.ToolCalls {
			t.toolCall(&d.ToolCalls[i])
		}
	}
	if c.FinishReason.Set {
		f := finishReason(c.FinishReason.Text)
		t.finish = &f
	}
}

// delta appends a text or reasoning delta, opening its block first.
func (t *translator) delta(b *openBlock, blockType, chunkType, text string) *openBlock {
	if b == nil {
		b = t.open(blockType)
	}
	b.text.WriteString(text)
	t.out = append(t.out, vocab.Chunk{Type: chunkType, Index: b.index, Text: text})
	return b
}

// toolCall extends (or opens) the block of one tool-call index.
func (t *translator) toolCall(part *wireToolCallPart) {
	key := -1.0 // a part without an index: one block of its own
	if part.Index != nil {
		key = *part.Index
	}
	b := t.tools[key]
	if b == nil {
		if t.tools == nil {
			t.tools = map[float64]*openBlock{}
		}
		b = t.open(event.BlockToolCall)
		t.tools[key] = b
	}
	if part.ID.Set {
		b.callID = part.ID.Text
	}
	fragment := ""
	if f := part.Function; f != nil {
		if f.Name.Set {
			b.name = f.Name.Text
		}
		fragment = f.Arguments.Text
	}
	b.text.WriteString(fragment)
	t.out = append(t.out, vocab.Chunk{Type: vocab.ChunkToolCallDelta, Index: b.index, ID: b.callID,
		Name: b.name, ArgumentsDelta: fragment})
}

// open starts a block with the next index.
func (t *translator) open(kind string) *openBlock {
	b := &openBlock{index: len(t.blocks), kind: kind}
	t.blocks = append(t.blocks, b)
	t.out = append(t.out, vocab.Chunk{Type: vocab.ChunkBlockStart, Index: b.index, BlockType: kind})
	return b
}

// done closes every block, then emits the usage (if any) and the finish:
// a stop (or absent) finish with no block is EMPTY_RESPONSE.
func (t *translator) done() {
	for _, b := range t.blocks {
		block := b.block()
		t.out = append(t.out, vocab.Chunk{Type: vocab.ChunkBlockEnd, Index: b.index, Block: &block})
	}
	if t.usage != nil {
		t.out = append(t.out, vocab.Chunk{Type: vocab.ChunkUsage, Usage: t.usage})
	}
	reason := vocab.FinishReason{Kind: vocab.FinishStop}
	if t.finish != nil {
		reason = *t.finish
	}
	if reason.Kind == vocab.FinishStop && len(t.blocks) == 0 {
		reason = vocab.FinishReason{Kind: vocab.FinishError, Failure: &vocab.Failure{
			Message: "model returned a completed response with no content", Code: CodeEmptyResponse,
		}}
	}
	t.out = append(t.out, vocab.Chunk{Type: vocab.ChunkFinish, Finish: &reason})
}

// block is the finished content block.
func (b *openBlock) block() event.Block {
	if b.kind == event.BlockToolCall {
		return event.ToolCallBlock{ID: b.callID, Name: b.name, Arguments: b.text.String()}.Block()
	}
	return event.Block{Type: b.kind, Text: b.text.String()}
}

// usage maps wire usage to disjoint counts: cached input (OpenAI's
// prompt_tokens_details.cached_tokens, else DeepSeek's
// prompt_cache_hit_tokens) is taken out of the input count.
func (u *wireUsage) usage() vocab.Usage {
	cacheRead := u.PromptCacheHitTokens
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil {
		cacheRead = d.CachedTokens
	}
	out := vocab.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CacheReadTokens: cacheRead}
	if cacheRead != nil {
		out.InputTokens -= *cacheRead
	}
	if d := u.CompletionTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens
	}
	return out
}

// prefix is at most n characters (UTF-16 code units, as JavaScript's
// slice counts them) of s.
func prefix(s string, n int) string {
	units := 0
	for i, r := range s {
		w := 1
		if r > 0xFFFF {
			w = 2
		}
		if units+w > n {
			return s[:i]
		}
		units += w
	}
	return s
}
