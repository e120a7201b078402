package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
)

// payload validates one method's request object field by field, collecting
// every issue instead of stopping at the first, with the issues zod 4 gives
// for the original's schemas (Issue). Unknown keys are ignored.
type payload struct {
	fields map[string]json.RawMessage
	issues []Issue
}

func readPayload(raw json.RawMessage) *payload {
	p := &payload{}
	if !isJSONObject(raw) || json.Unmarshal(raw, &p.fields) != nil || p.fields == nil {
		p.fields = nil
		p.issues = append(p.issues, invalidType(nil, "object", raw, true))
	}
	return p
}

// maxSafeInt is JavaScript's Number.MAX_SAFE_INTEGER, zod's int() bound.
const maxSafeInt = 1<<53 - 1

// sessionID reads a required non-empty string (z.string().min(1)); a value
// of another type can also fail the min check (minLengthAfterInvalidType).
func (p *payload) sessionID(name string) string {
	if p.fields == nil {
		return ""
	}
	path := []any{name}
	v, present := p.fields[name]
	var s string
	if !present || !isJSONString(v) || json.Unmarshal(v, &s) != nil {
		p.issues = append(p.issues, invalidType(path, "string", v, present))
		p.minLengthAfterInvalidType(path, v)
		return ""
	}
	if s == "" {
		p.issues = append(p.issues, Issue{Code: "too_small", Origin: "string", Limit: 1, Inclusive: true, Path: path,
			Message: "Too small: expected string to have >=1 characters"})
	}
	return s
}

// optionalString reads z.string().optional() or, nonEmpty, z.string().min(1).optional()
// (session.list's cursor, session.create's workspaceId, cwd and sessionId):
// an absent field is ("", false); null is an invalid type, as for optionalInt.
func (p *payload) optionalString(name string, nonEmpty bool) (string, bool) {
	v, present := p.fields[name]
	if !present {
		return "", false
	}
	path := []any{name}
	var s string
	if !isJSONString(v) || json.Unmarshal(v, &s) != nil {
		p.issues = append(p.issues, invalidType(path, "string", v, true))
		if nonEmpty {
			p.minLengthAfterInvalidType(path, v)
		}
		return "", false
	}
	if nonEmpty && s == "" {
		p.issues = append(p.issues, Issue{Code: "too_small", Origin: "string", Limit: 1, Inclusive: true, Path: path,
			Message: "Too small: expected string to have >=1 characters"})
		return "", false
	}
	return s, true
}

// optionalInt reads z.number().int().positive().optional() (positive) or
// z.number().int().nonnegative().optional(): an absent field is nil. JSON
// null is not absent: zod's optional() rejects it as an invalid type.
func (p *payload) optionalInt(name string, positive bool) *int64 {
	v, present := p.fields[name]
	if !present {
		return nil
	}
	path := []any{name}
	if jsonTypeName(v) != "number" {
		p.issues = append(p.issues, invalidType(path, "number", v, true))
		return nil
	}
	f, ok := jsonNumber(v)
	if !ok || math.IsInf(f, 0) {
		// JSON.parse reads a number beyond float64's range as ±Infinity,
		// which z.number() refuses with received "Infinity" (for -Infinity
		// too).
		issue := invalidType(path, "number", v, true)
		issue.Received = "Infinity"
		p.issues = append(p.issues, issue)
		return nil
	}
	if f != math.Trunc(f) {
		p.issues = append(p.issues, Issue{Code: "invalid_type", Expected: "int", Format: "safeint", Path: path,
			Message: "Invalid input: expected int, received number"})
		return nil
	}
	before := len(p.issues)
	const note = "Integers must be within the safe integer range."
	if f > maxSafeInt {
		p.issues = append(p.issues, Issue{Code: "too_big", Limit: maxSafeInt, Note: note, Origin: "int", Inclusive: true,
			Path: path, Message: fmt.Sprintf("Too big: expected int to be <=%d", maxSafeInt)})
	} else if f < -maxSafeInt {
		p.issues = append(p.issues, Issue{Code: "too_small", Limit: -maxSafeInt, Note: note, Origin: "int", Inclusive: true,
			Path: path, Message: fmt.Sprintf("Too small: expected int to be >=%d", -maxSafeInt)})
	}
	if positive && f <= 0 {
		p.issues = append(p.issues, Issue{Code: "too_small", Origin: "number", Limit: 0, Inclusive: false, Path: path,
			Message: "Too small: expected number to be >0"})
	} else if !positive && f < 0 {
		p.issues = append(p.issues, Issue{Code: "too_small", Origin: "number", Limit: 0, Inclusive: true, Path: path,
			Message: "Too small: expected number to be >=0"})
	}
	if len(p.issues) > before {
		return nil
	}
	n := int64(f)
	return &n
}

// invalidType is zod's invalid_type issue for a value that is absent
// (present false: "received undefined") or of another JSON type.
func invalidType(path []any, expected string, v json.RawMessage, present bool) Issue {
	received := "undefined"
	if present {
		received = jsonTypeName(v)
	}
	if path == nil {
		path = []any{}
	}
	return Issue{Code: "invalid_type", Expected: expected, Path: path,
		Message: "Invalid input: expected " + expected + ", received " + received}
}

// jsonTypeName names a JSON value's type as zod reports it.
func jsonTypeName(v json.RawMessage) string {
	switch firstByte(v) {
	case 0:
		return "undefined"
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	case '[':
		return "array"
	case '{':
		return "object"
	default:
		return "number"
	}
}

// content reads seed 004's ContentBlock[]: z.array(z.looseObject({type:
// z.string()})), an array (possibly empty) of objects each with a string
// type; other keys are allowed and kept as the original's parse keeps them
// (event.LooseBlock: type first, then the others). The result is never nil
// when there is no issue.
func (p *payload) content(name string) []agent.Block {
	if p.fields == nil {
		return nil
	}
	v, present := p.fields[name]
	var items []json.RawMessage
	if !present || !isJSONArray(v) || json.Unmarshal(v, &items) != nil {
		p.issues = append(p.issues, invalidType([]any{name}, "array", v, present))
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
		p.issues = append(p.issues, invalidType(path, "object", item, true))
		return agent.Block{}, false
	}
	if raw, present := fields["type"]; !present || !isJSONString(raw) {
		p.issues = append(p.issues, invalidType(append(path, "type"), "string", raw, present))
		return agent.Block{}, false
	}
	b, err := event.LooseBlock(item)
	if err != nil { // json.Unmarshal accepted what JSON.parse refuses
		p.issues = append(p.issues, invalidType(path, "object", item, true))
		return agent.Block{}, false
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

// literalUnion reads z.union([z.literal(v0), z.literal(v1), …]) (session.prompt's
// mode) and returns the value, or records the invalid_union issue zod
// reports for any other value, an absent key and null included.
func (p *payload) literalUnion(name string, values ...string) string {
	raw, present := p.fields[name]
	var s string
	if present && isJSONString(raw) && json.Unmarshal(raw, &s) == nil {
		for _, v := range values {
			if s == v {
				return s
			}
		}
	}
	issue := Issue{Code: "invalid_union", Errors: make([][]Issue, len(values)), Path: []any{name}, Message: "Invalid input"}
	for i, v := range values {
		issue.Errors[i] = []Issue{{Code: "invalid_value", Values: []any{v}, Path: []any{},
			Message: "Invalid input: expected " + jsonString(v)}}
	}
	p.issues = append(p.issues, issue)
	return ""
}

// jsonNumber is the float64 JSON.parse gives a JSON number token: beyond
// float64's range it is ±Inf (strconv's ErrRange), below it ±0. ok is false
// only for a token that is not a number.
func jsonNumber(v json.RawMessage) (f float64, ok bool) {
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
	return f, err == nil || errors.Is(err, strconv.ErrRange)
}

// minLengthAfterInvalidType adds the issue of z.string().min(1)'s check to
// an invalid_type: zod 4 runs a length check even on an aborted value when
// its when holds, i.e. the value is neither null nor undefined and has a
// length. In JSON that is an array (origin "array") or an object with an
// own "length" key (origin "unknown"), never a number, boolean or null; the
// check fails when JavaScript's length >= 1 is false.
func (p *payload) minLengthAfterInvalidType(path []any, v json.RawMessage) {
	switch firstByte(v) {
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(v, &items) == nil && len(items) == 0 {
			p.issues = append(p.issues, Issue{Code: "too_small", Origin: "array", Limit: 1, Inclusive: true, Path: path,
				Message: "Too small: expected array to have >=1 items"})
		}
	case '{':
		var fields map[string]json.RawMessage
		if json.Unmarshal(v, &fields) != nil {
			return
		}
		length, has := fields["length"]
		if has && !(jsToNumber(length) >= 1) {
			p.issues = append(p.issues, Issue{Code: "too_small", Origin: "unknown", Limit: 1, Inclusive: true, Path: path,
				Message: "Too small: expected unknown to be >=1"})
		}
	}
}

// jsToNumber is the number JavaScript's relational comparison converts a
// JSON value to (ToPrimitive with hint number, then ToNumber); NaN when
// there is none.
func jsToNumber(v json.RawMessage) float64 {
	switch firstByte(v) {
	case 'n', 'f':
		return 0
	case 't':
		return 1
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return math.NaN()
		}
		return jsStringToNumber(s)
	case '[':
		// An array converts through its join(","): empty is "" (0), two or
		// more elements hold a comma (NaN), a single element converts as
		// its own String().
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil || len(items) > 1 {
			return math.NaN()
		}
		if len(items) == 0 {
			return 0
		}
		switch firstByte(items[0]) {
		case 'n':
			return 0 // String(null) inside join is ""
		case 't', 'f', '{':
			return math.NaN() // "true", "false", "[object Object]"
		}
		return jsToNumber(items[0])
	case '{':
		return math.NaN() // "[object Object]"
	default:
		if f, ok := jsonNumber(v); ok {
			return f
		}
		return math.NaN()
	}
}

// jsDecimal is ECMAScript's StrDecimalLiteral (no numeric separators).
var jsDecimal = regexp.MustCompile(`^[+-]?(?:Infinity|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)$`)

// jsNonDecimal is ECMAScript's NonDecimalIntegerLiteral (unsigned).
var jsNonDecimal = regexp.MustCompile(`^0(?:[xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)$`)

// jsStringToNumber is ECMAScript's StringToNumber: surrounding white space
// and line terminators trimmed, "" is 0, then a decimal literal, ±Infinity
// or an unsigned 0x/0o/0b integer; anything else is NaN.
func jsStringToNumber(s string) float64 {
	s = strings.TrimFunc(s, isJSWhiteSpace)
	switch {
	case s == "":
		return 0
	case jsNonDecimal.MatchString(s):
		if strings.Trim(s[2:], "0") == "" {
			return 0
		}
		// Only >= 1 matters to the caller: a non-zero integer is >= 1.
		return math.Inf(1)
	case !jsDecimal.MatchString(s):
		return math.NaN()
	case strings.HasSuffix(s, "Infinity"):
		if s[0] == '-' {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	f, _ := strconv.ParseFloat(s, 64) // ±Inf on overflow, as JavaScript
	return f
}

// isJSWhiteSpace is ECMAScript's WhiteSpace or LineTerminator.
func isJSWhiteSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', '\u00a0', '\u2028', '\u2029', '\ufeff':
		return true
	}
	return unicode.Is(unicode.Zs, r)
}
