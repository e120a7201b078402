// Package jsjson reads JSON text into values that keep JavaScript's view of
// it, and writes them back the way JSON.stringify does, so that bytes this
// runtime passes through are the bytes the original TypeScript system would
// have written for the same input.
//
// JavaScript's view, as JSON.parse builds it: an object's keys are
// enumerated with the integer-like ones (array indices, "0" to
// "4294967294" without leading zeros) first in ascending order, then the
// others in the order they first appeared; a repeated key keeps its first
// place and its last value; every number is a float64 (one beyond its range
// is ±Infinity, which JSON.stringify writes as null). JSON.stringify writes
// numbers as Number.prototype.toString does, escapes only '"', '\\' and the
// control characters, and writes everything else (U+2028, U+2029, DEL)
// raw. A lone UTF-16 surrogate escape cannot live in a Go string: it is read
// as U+FFFD.
package jsjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is the JavaScript type of a Value.
type Kind uint8

// The kinds of Value.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is one JSON value as JSON.parse builds it. The zero Value is null.
type Value struct {
	kind  Kind
	b     bool
	num   float64
	str   string
	items []Value
	obj   *Obj
}

// Kind is v's type.
func (v Value) Kind() Kind { return v.kind }

// Str is a String's text ("" for the other kinds).
func (v Value) Str() string { return v.str }

// Object is an Object's members (nil for the other kinds).
func (v Value) Object() *Obj { return v.obj }

// ObjectValue wraps o as a Value.
func ObjectValue(o *Obj) Value { return Value{kind: Object, obj: o} }

// Obj is a JavaScript object's own string-keyed properties.
type Obj struct {
	keys []string         // in first-insertion order
	vals map[string]Value // by key
}

// NewObj returns an empty object.
func NewObj() *Obj { return &Obj{vals: map[string]Value{}} }

// Set assigns key: a new key is added last, an existing one keeps its
// place and takes the new value.
func (o *Obj) Set(key string, v Value) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// Get returns key's value and whether o has it.
func (o *Obj) Get(key string) (Value, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// Keys are o's keys in JavaScript's enumeration order: integer-like keys
// ascending, then the others in insertion order.
func (o *Obj) Keys() []string {
	var indices, names []string
	for _, k := range o.keys {
		if _, ok := arrayIndex(k); ok {
			indices = append(indices, k)
		} else {
			names = append(names, k)
		}
	}
	slices.SortFunc(indices, func(a, b string) int {
		x, _ := arrayIndex(a)
		y, _ := arrayIndex(b)
		return int(int64(x) - int64(y))
	})
	return append(indices, names...)
}

// arrayIndex reports whether k is a canonical array index.
func arrayIndex(k string) (uint32, bool) {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(k, 10, 32)
	if err != nil || n == math.MaxUint32 {
		return 0, false
	}
	return uint32(n), true
}

// Parse reads one JSON text (surrounding whitespace allowed) as JSON.parse
// would.
func Parse(text []byte) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return Value{}, fmt.Errorf("jsjson: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Value{}, errors.New("jsjson: text after the JSON value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder) (Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return Value{}, err
	}
	switch t := tok.(type) {
	case nil:
		return Value{}, nil
	case bool:
		return Value{kind: Bool, b: t}, nil
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return Value{}, err
		}
		return Value{kind: Number, num: f}, nil
	case string:
		return Value{kind: String, str: t}, nil
	case json.Delim:
		if t == '[' {
			return parseArray(dec)
		}
		return parseObject(dec)
	}
	return Value{}, fmt.Errorf("unexpected token %v", tok)
}

func parseArray(dec *json.Decoder) (Value, error) {
	v := Value{kind: Array, items: []Value{}}
	for dec.More() {
		item, err := parseValue(dec)
		if err != nil {
			return Value{}, err
		}
		v.items = append(v.items, item)
	}
	_, err := dec.Token() // ]
	return v, err
}

func parseObject(dec *json.Decoder) (Value, error) {
	o := NewObj()
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return Value{}, err
		}
		v, err := parseValue(dec)
		if err != nil {
			return Value{}, err
		}
		o.Set(key.(string), v)
	}
	_, err := dec.Token() // }
	return ObjectValue(o), err
}

// Append appends JSON.stringify(v) to buf.
func (v Value) Append(buf []byte) []byte {
	switch v.kind {
	case Bool:
		return strconv.AppendBool(buf, v.b)
	case Number:
		return AppendNumber(buf, v.num)
	case String:
		return AppendString(buf, v.str)
	case Array:
		buf = append(buf, '[')
		for i, item := range v.items {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = item.Append(buf)
		}
		return append(buf, ']')
	case Object:
		buf = append(buf, '{')
		for i, k := range v.obj.Keys() {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = AppendString(buf, k)
			buf = append(buf, ':')
			buf = v.obj.vals[k].Append(buf)
		}
		return append(buf, '}')
	}
	return append(buf, "null"...)
}

// AppendNumber appends f as JSON.stringify writes a number: as
// Number.prototype.toString, null when it is not finite.
func AppendNumber(buf []byte, f float64) []byte {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return append(buf, "null"...)
	case f == 0:
		return append(buf, '0')
	case f < 0:
		buf = append(buf, '-')
		f = -f
	}
	mantissa, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	digits := strings.Replace(mantissa, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	k, n := len(digits), e+1 // digits × 10^(n−k)
	switch {
	case k <= n && n <= 21:
		buf = append(buf, digits...)
		return append(buf, strings.Repeat("0", n-k)...)
	case 0 < n && n <= 21:
		buf = append(buf, digits[:n]...)
		buf = append(buf, '.')
		return append(buf, digits[n:]...)
	case -6 < n && n <= 0:
		buf = append(buf, "0."...)
		buf = append(buf, strings.Repeat("0", -n)...)
		return append(buf, digits...)
	}
	buf = append(buf, digits[0])
	if k > 1 {
		buf = append(buf, '.')
		buf = append(buf, digits[1:]...)
	}
	buf = append(buf, 'e')
	if n-1 >= 0 {
		buf = append(buf, '+')
	}
	return strconv.AppendInt(buf, int64(n-1), 10)
}

// AppendString appends s quoted as JSON.stringify quotes it; invalid UTF-8
// is written as U+FFFD.
func AppendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c < 0x20:
			buf = appendControl(buf, c)
		case c < utf8.RuneSelf:
			buf = append(buf, c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			buf = utf8.AppendRune(buf, r) // RuneError for invalid bytes
			i += size
			continue
		}
		i++
	}
	return append(buf, '"')
}

func appendControl(buf []byte, c byte) []byte {
	switch c {
	case '\b':
		return append(buf, `\b`...)
	case '\f':
		return append(buf, `\f`...)
	case '\n':
		return append(buf, `\n`...)
	case '\r':
		return append(buf, `\r`...)
	case '\t':
		return append(buf, `\t`...)
	}
	const hex = "0123456789abcdef"
	return append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}

// Marshal is json.Marshal without HTML escaping and without the encoder's
// trailing newline: a struct's keys in field order, '<', '>' and '&' raw,
// and U+2028 and U+2029 raw, as JSON.stringify writes them. Other values
// that must be the original's bytes whatever they hold go through
// Value.Append.
func Marshal(v any) ([]byte, error) {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return unescapeLineSeparators(bytes.TrimSuffix(out.Bytes(), []byte{'\n'})), nil
}

// unescapeLineSeparators rewrites encoding/json's \u2028 and \u2029
// escapes in b as the raw characters, in place. It steps over every other
// escape whole, so an escaped backslash followed by the text "u2028"
// stays as it is.
func unescapeLineSeparators(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u202`)) {
		return b
	}
	out := b[:0]
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		switch string(b[i+1 : min(i+6, len(b))]) {
		case "u2028":
			out = append(out, "\u2028"...)
		case "u2029":
			out = append(out, "\u2029"...)
		default:
			out = append(out, b[i], b[i+1])
			i++
			continue
		}
		i += 5
	}
	return out
}
