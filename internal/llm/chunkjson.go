package llm

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// decodeChunk reads one chat.completion.chunk payload into c exactly as
// json.Unmarshal does. A scanner made for the chunk's few fields reads the
// common payloads without reflection; whatever it is not sure of (a
// syntax error, a type it does not expect, a repeated or case-folded key,
// an escaped key) goes to json.Unmarshal, which decides.
func decodeChunk(data []byte, c *wireChunk) error {
	s := chunkScanner{data: data}
	s.space()
	if s.chunk(c) && s.end() {
		return nil
	}
	*c = wireChunk{}
	return json.Unmarshal(data, c)
}

// maxScanDepth bounds the nesting the scanner follows; deeper input goes
// to json.Unmarshal.
const maxScanDepth = 64

// chunkScanner reads JSON from data; every method returns false when the
// input is not what it can decode exactly (the caller then falls back).
type chunkScanner struct {
	data  []byte
	pos   int
	depth int
}

// The members each wire object declares, in a fixed order: a field's bit
// in a seen set is its place here.
var (
	chunkFields    = []string{"choices", "usage"}
	choiceFields   = []string{"delta", "finish_reason"}
	deltaFields    = []string{"content", "reasoning_content", "reasoning", "tool_calls"}
	partFields     = []string{"index", "id", "function"}
	functionFields = []string{"name", "arguments"}
	usageFields    = []string{"prompt_tokens", "completion_tokens", "prompt_cache_hit_tokens",
		"prompt_tokens_details", "completion_tokens_details"}
	cachedFields    = []string{"cached_tokens"}
	reasoningFields = []string{"reasoning_tokens"}
)

func (s *chunkScanner) chunk(c *wireChunk) bool {
	return s.object(chunkFields, func(field int) bool {
		if field == 0 {
			return s.choices(&c.Choices)
		}
		return pointer(s, &c.Usage, s.usage)
	})
}

func (s *chunkScanner) choices(out *[]wireChoice) bool {
	return array(s, out, func() bool {
		*out = append(*out, wireChoice{})
		c := &(*out)[len(*out)-1]
		return s.nullOr(func() bool {
			return s.object(choiceFields, func(field int) bool {
				if field == 0 {
					return pointer(s, &c.Delta, s.delta)
				}
				return s.looseText(&c.FinishReason)
			})
		})
	})
}

func (s *chunkScanner) delta(d *wireDelta) bool {
	return s.object(deltaFields, func(field int) bool {
		switch field {
		case 0:
			return s.looseText(&d.Content)
		case 1:
			return s.looseText(&d.ReasoningContent)
		case 2:
			return s.looseText(&d.Reasoning)
		}
		return array(s, &d.ToolCalls, func() bool {
			d.ToolCalls = append(d.ToolCalls, wireToolCallPart{})
			return s.nullOr(func() bool { return s.toolCallPart(&d.ToolCalls[len(d.ToolCalls)-1]) })
		})
	})
}

func (s *chunkScanner) toolCallPart(p *wireToolCallPart) bool {
	return s.object(partFields, func(field int) bool {
		switch field {
		case 0:
			return s.floatPointer(&p.Index)
		case 1:
			return s.looseText(&p.ID)
		}
		return pointer(s, &p.Function, func(f *wireFunction) bool {
			return s.object(functionFields, func(field int) bool {
				if field == 0 {
					return s.looseText(&f.Name)
				}
				return s.looseText(&f.Arguments)
			})
		})
	})
}

func (s *chunkScanner) usage(u *wireUsage) bool {
	return s.object(usageFields, func(field int) bool {
		switch field {
		case 0:
			return s.integer(&u.PromptTokens)
		case 1:
			return s.integer(&u.CompletionTokens)
		case 2:
			return s.intPointer(&u.PromptCacheHitTokens)
		case 3:
			return pointer(s, &u.PromptTokensDetails, func(d *wireCachedTokens) bool {
				return s.object(cachedFields, func(int) bool { return s.intPointer(&d.CachedTokens) })
			})
		}
		return pointer(s, &u.CompletionTokensDetails, func(d *wireReasoningTokens) bool {
			return s.object(reasoningFields, func(int) bool { return s.intPointer(&d.ReasoningTokens) })
		})
	})
}

// pointer reads null as nil, or an object into a new T.
func pointer[T any](s *chunkScanner, p **T, read func(*T) bool) bool {
	if s.null() {
		*p = nil
		return true
	}
	if s.peek() != '{' {
		return false
	}
	v := new(T)
	*p = v
	return read(v)
}

// object reads an object, handing each member named in fields to member
// (by its place in fields) and skipping the others. A key with an escape,
// a key repeating a field, or one equal to a field but for case is left
// to json.Unmarshal.
func (s *chunkScanner) object(fields []string, member func(field int) bool) bool {
	if !s.open('{') {
		return false
	}
	var seen uint32
	if s.close('}') {
		return true
	}
	for {
		s.space()
		key, ok := s.plainString()
		if !ok || !s.colon() {
			return false
		}
		field := fieldOf(key, fields)
		switch {
		case field == foldedField || field >= 0 && seen&(1<<field) != 0:
			return false
		case field >= 0:
			seen |= 1 << field
			ok = member(field)
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
		if more, ok := s.next('}'); !ok || !more {
			return ok
		}
	}
}

// foldedField marks a key that matches a field only case-insensitively.
const foldedField = -2

// fieldOf is key's place in fields, -1 when it names none of them.
func fieldOf(key []byte, fields []string) int {
	for i, f := range fields {
		if string(key) == f {
			return i
		}
	}
	for _, f := range fields {
		if bytes.EqualFold(key, []byte(f)) {
			return foldedField
		}
	}
	return -1
}

// array reads null as a nil slice, or an array handing each element to
// element (which appends it to the slice).
func array[T any](s *chunkScanner, out *[]T, element func() bool) bool {
	if s.null() {
		*out = nil
		return true
	}
	if !s.open('[') {
		return false
	}
	*out = []T{} // an empty array is an empty slice, not nil
	if s.close(']') {
		return true
	}
	for {
		s.space()
		if !element() {
			return false
		}
		if more, ok := s.next(']'); !ok || !more {
			return ok
		}
	}
}

// nullOr reads null (leaving the value as it is) or what read reads.
func (s *chunkScanner) nullOr(read func() bool) bool {
	return s.null() || read()
}

// looseText reads a string as its text and any other value as unset.
func (s *chunkScanner) looseText(t *looseText) bool {
	if s.peek() != '"' {
		*t = looseText{}
		return s.skip()
	}
	start := s.pos
	if !s.skipString() {
		return false
	}
	literal := s.data[start:s.pos]
	if text, ok := plainString(literal); ok {
		*t = looseText{Text: text, Set: true}
		return true
	}
	var text string
	if json.Unmarshal(literal, &text) != nil {
		return false
	}
	*t = looseText{Text: text, Set: true}
	return true
}

// integer reads an integer number into an int (null leaves it).
func (s *chunkScanner) integer(n *int) bool {
	if s.null() {
		return true
	}
	literal, ok := s.number()
	if !ok {
		return false
	}
	v, err := strconv.ParseInt(string(literal), 10, strconv.IntSize)
	*n = int(v)
	return err == nil
}

func (s *chunkScanner) intPointer(p **int) bool {
	if s.null() {
		*p = nil
		return true
	}
	n := new(int)
	*p = n
	return s.integer(n)
}

func (s *chunkScanner) floatPointer(p **float64) bool {
	if s.null() {
		*p = nil
		return true
	}
	literal, ok := s.number()
	if !ok {
		return false
	}
	v, err := strconv.ParseFloat(string(literal), 64)
	*p = &v
	return err == nil
}

// skip passes over one value, checking its syntax.
func (s *chunkScanner) skip() bool {
	switch s.peek() {
	case '"':
		return s.skipString()
	case '{':
		return s.object(nil, nil)
	case '[':
		var none []struct{}
		return array(s, &none, s.skip)
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.null()
	}
	_, ok := s.number()
	return ok
}

// skipString passes over a string literal: valid escapes, no control
// characters.
func (s *chunkScanner) skipString() bool {
	s.pos++ // the opening quote
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if !s.skipEscape() {
				return false
			}
		default:
			s.pos++
		}
	}
	return false
}

func (s *chunkScanner) skipEscape() bool {
	if s.pos+1 >= len(s.data) {
		return false
	}
	switch s.data[s.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos += 2
		return true
	case 'u':
		if s.pos+6 > len(s.data) {
			return false
		}
		for _, h := range s.data[s.pos+2 : s.pos+6] {
			if !isHex(h) {
				return false
			}
		}
		s.pos += 6
		return true
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// plainString reads a string without escapes (a key) and returns its bytes.
func (s *chunkScanner) plainString() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	start := s.pos
	if !s.skipString() {
		return nil, false
	}
	inner := s.data[start+1 : s.pos-1]
	if bytes.IndexByte(inner, '\\') >= 0 || !utf8.Valid(inner) {
		return nil, false
	}
	return inner, true
}

// number reads a number as JSON writes it:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *chunkScanner) number() ([]byte, bool) {
	start := s.pos
	if s.peek() == '-' {
		s.pos++
	}
	switch c := s.peek(); {
	case c == '0':
		s.pos++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		return nil, false
	}
	if s.peek() == '.' {
		s.pos++
		if !s.digits() {
			return nil, false
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.pos++
		if c := s.peek(); c == '+' || c == '-' {
			s.pos++
		}
		if !s.digits() {
			return nil, false
		}
	}
	return s.data[start:s.pos], true
}

// digits passes over one or more decimal digits.
func (s *chunkScanner) digits() bool {
	start := s.pos
	for c := s.peek(); '0' <= c && c <= '9'; c = s.peek() {
		s.pos++
	}
	return s.pos > start
}

func (s *chunkScanner) literal(word string) bool {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		return false
	}
	s.pos += len(word)
	return true
}

// null reads a null if one is next.
func (s *chunkScanner) null() bool { return s.literal("null") }

// open reads the bracket that opens an object or array.
func (s *chunkScanner) open(bracket byte) bool {
	if s.peek() != bracket || s.depth >= maxScanDepth {
		return false
	}
	s.pos++
	s.depth++
	return true
}

// close reads the closing bracket of an empty object or array.
func (s *chunkScanner) close(bracket byte) bool {
	s.space()
	if s.peek() != bracket {
		return false
	}
	s.pos++
	s.depth--
	return true
}

// next reads what follows a member or element: a comma (more is true) or
// the closing bracket.
func (s *chunkScanner) next(bracket byte) (more, ok bool) {
	s.space()
	switch s.peek() {
	case ',':
		s.pos++
		return true, true
	case bracket:
		s.pos++
		s.depth--
		return false, true
	}
	return false, false
}

// colon reads the colon after a key and the space around it.
func (s *chunkScanner) colon() bool {
	s.space()
	if s.peek() != ':' {
		return false
	}
	s.pos++
	s.space()
	return true
}

// end is true when only white space is left.
func (s *chunkScanner) end() bool {
	s.space()
	return s.pos == len(s.data)
}

func (s *chunkScanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek is the next byte (0 at the end).
func (s *chunkScanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}
