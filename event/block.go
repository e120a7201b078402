package event

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/dsh-actors/dsh-actors/internal/jsjson"
)

// Block is one content block of a message: its type and, when it has a
// string one, its text. A block that is more than {"type":…,"text":"…"} (an
// image, a text block with other keys) keeps all of itself in Raw, which is
// what its JSON is.
type Block struct {
	Type string
	Text string
	// Raw is the whole block as JSON.stringify writes it, nil for a plain
	// {"type":…,"text":"…"} block. Set by UnmarshalJSON.
	// When set it is the block's JSON, whatever Type and Text say: code
	// that changes a block must clear it.
	Raw json.RawMessage
}

// MarshalJSON writes b.Raw when set, else {"type":…,"text":…} as
// JSON.stringify would.
func (b Block) MarshalJSON() ([]byte, error) {
	if b.Raw != nil {
		return b.Raw, nil
	}
	buf := append([]byte(nil), `{"type":`...)
	buf = jsjson.AppendString(buf, b.Type)
	buf = append(buf, `,"text":`...)
	buf = jsjson.AppendString(buf, b.Text)
	return append(buf, '}'), nil
}

// UnmarshalJSON reads any JSON value as JSON.parse would: Type and Text
// are its string "type" and "text" (empty otherwise), and Raw is the value
// as JSON.stringify writes it unless it is exactly {"type":"…","text":"…"}
// in that order, so that writing b back gives what the original would.
func (b *Block) UnmarshalJSON(data []byte) error {
	if plain, ok := plainTextBlock(data); ok {
		*b = plain
		return nil
	}
	v, err := jsjson.Parse(data)
	if err != nil {
		return err
	}
	*b = blockOf(v)
	return nil
}

// plainTextBlock reads the common block, {"type":"…","text":"…"} written
// compactly with two strings that need no unescaping (no backslash, no
// control character, valid UTF-8), without building a parsed value: it
// is what UnmarshalJSON's general parse makes of those bytes. It reports
// false for any other text.
func plainTextBlock(data []byte) (Block, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(`{"type":"`))
	if !ok {
		return Block{}, false
	}
	typ, rest, ok := plainString(rest)
	if !ok {
		return Block{}, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"text":"`)); !ok {
		return Block{}, false
	}
	text, rest, ok := plainString(rest)
	if !ok || string(rest) != "}" {
		return Block{}, false
	}
	return Block{Type: typ, Text: text}, true
}

// plainString splits b at its first quote into the string before it and
// the bytes after it, when that string reads as itself in JSON.
func plainString(b []byte) (s string, rest []byte, ok bool) {
	end := bytes.IndexByte(b, '"')
	if end < 0 {
		return "", nil, false
	}
	for _, c := range b[:end] {
		if c < 0x20 || c == '\\' {
			return "", nil, false
		}
	}
	if !utf8.Valid(b[:end]) {
		return "", nil, false
	}
	return string(b[:end]), b[end+1:], true
}

// blockOf is the Block of a parsed value.
func blockOf(v jsjson.Value) Block {
	o := v.Object()
	if o == nil {
		return Block{Raw: v.Append(nil)}
	}
	var b Block
	typ, hasType := o.Get("type")
	text, hasText := o.Get("text")
	if hasType && typ.Kind() == jsjson.String {
		b.Type = typ.Str()
	}
	if hasText && text.Kind() == jsjson.String {
		b.Text = text.Str()
	}
	if keys := o.Keys(); len(keys) != 2 || keys[0] != "type" || keys[1] != "text" ||
		typ.Kind() != jsjson.String || text.Kind() != jsjson.String {
		b.Raw = v.Append(nil)
	}
	return b
}
