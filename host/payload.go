package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/jsjson"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
)

// The issue codes of a bad-request's details.issues.
const (
	issueInvalidType  = "invalid_type"  // missing, or the wrong JSON type, or not an integer
	issueTooSmall     = "too_small"     // an empty string, a number below its minimum
	issueTooBig       = "too_big"       // a number above maxSafeInt, an id too long to store
	issueInvalidValue = "invalid_value" // outside a fixed set of values, or a forbidden character
	issueConflict     = "conflict"      // keys that exclude each other
)

// payload validates one method's request object field by field, collecting
// every issue instead of stopping at the first. Unknown keys are ignored.
type payload struct {
	fields map[string]json.RawMessage
	issues []payloadIssue
}

func readPayload(raw json.RawMessage) *payload {
	p := &payload{}
	if !isJSONObject(raw) || json.Unmarshal(raw, &p.fields) != nil || p.fields == nil {
		p.fields = nil
		p.issues = append(p.issues, wrongType(nil, "object", raw, true))
	}
	return p
}

// maxSafeInt is the largest integer a JavaScript client holds exactly
// (2^53-1), the bound of every number in a payload.
const maxSafeInt = 1<<53 - 1

// maxSegmentBytes is the longest folder name a file system takes: an id
// that names a new stored session must encode to no more.
const maxSegmentBytes = 255

func (p *payload) add(code string, path []any, message string) {
	if path == nil {
		path = []any{}
	}
	p.issues = append(p.issues, payloadIssue{Code: code, Path: path, Message: message})
}

// sessionID reads a required non-empty string.
func (p *payload) sessionID(name string) string {
	if p.fields == nil {
		return ""
	}
	v, present := p.fields[name]
	s, ok := p.stringValue(name, v, present)
	if ok && s == "" {
		p.add(issueTooSmall, []any{name}, "must not be empty")
	}
	return s
}

// optionalString reads a string that may be absent ("", false); nonEmpty
// refuses "". JSON null is a wrong type, not absence.
func (p *payload) optionalString(name string, nonEmpty bool) (string, bool) {
	v, present := p.fields[name]
	if !present {
		return "", false
	}
	s, ok := p.stringValue(name, v, true)
	if !ok {
		return "", false
	}
	if nonEmpty && s == "" {
		p.add(issueTooSmall, []any{name}, "must not be empty")
		return "", false
	}
	return s, true
}

// stringValue decodes v as a string, or records that it is missing or of
// another type.
func (p *payload) stringValue(name string, v json.RawMessage, present bool) (string, bool) {
	var s string
	if !present || !isJSONString(v) || json.Unmarshal(v, &s) != nil {
		p.issues = append(p.issues, wrongType([]any{name}, "string", v, present))
		return "", false
	}
	return s, true
}

// storableID checks that id, already read from field name, names a
// session folder the file system can hold.
func (p *payload) storableID(name, id string) {
	segment, err := logpath.EncodeSegment(id)
	if err == nil && len(segment) > maxSegmentBytes {
		p.add(issueTooBig, []any{name}, fmt.Sprintf("must encode to a folder name of at most %d bytes, not %d",
			maxSegmentBytes, len(segment)))
	}
}

// path checks that a cwd read from field name can name a directory.
func (p *payload) path(name, value string) {
	if strings.IndexByte(value, 0) >= 0 {
		p.add(issueInvalidValue, []any{name}, "must not contain a NUL character")
	}
}

// optionalInt reads an optional integer, at least 1 when positive, else at
// least 0, at most maxSafeInt: an absent field is nil; null is a wrong type.
func (p *payload) optionalInt(name string, positive bool) *int64 {
	v, present := p.fields[name]
	if !present {
		return nil
	}
	path := []any{name}
	if jsonTypeName(v) != "number" {
		p.issues = append(p.issues, wrongType(path, "integer", v, true))
		return nil
	}
	minimum := 0.0
	if positive {
		minimum = 1
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		p.issues = append(p.issues, wrongType(path, "integer", v, true))
	case f > maxSafeInt:
		p.add(issueTooBig, path, fmt.Sprintf("must be at most %d", maxSafeInt))
	case f < minimum:
		p.add(issueTooSmall, path, fmt.Sprintf("must be at least %v", minimum))
	case f != math.Trunc(f):
		p.add(issueInvalidType, path, "expected integer, got "+string(bytes.TrimSpace(v)))
	default:
		n := int64(f)
		return &n
	}
	return nil
}

// wrongType is the invalid_type issue of a value that is absent (present
// false) or of another JSON type than expected.
func wrongType(path []any, expected string, v json.RawMessage, present bool) payloadIssue {
	if path == nil {
		path = []any{}
	}
	if !present {
		return payloadIssue{Code: issueInvalidType, Path: path, Message: "required " + expected + " is missing"}
	}
	return payloadIssue{Code: issueInvalidType, Path: path, Message: "expected " + expected + ", got " + jsonTypeName(v)}
}

// jsonTypeName names a JSON value's type.
func jsonTypeName(v json.RawMessage) string {
	switch firstByte(v) {
	case 0:
		return "nothing"
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

// content reads a content array: possibly empty, of objects each with a
// string "type"; other keys are allowed and kept (looseBlock: type
// first, then the others). The result is never nil when there is no issue.
func (p *payload) content(name string) []event.Block {
	if p.fields == nil {
		return nil
	}
	v, present := p.fields[name]
	var items []json.RawMessage
	if !present || !isJSONArray(v) || json.Unmarshal(v, &items) != nil {
		p.issues = append(p.issues, wrongType([]any{name}, "array", v, present))
		return nil
	}
	blocks := make([]event.Block, 0, len(items))
	for i, item := range items {
		if b, ok := p.block([]any{name, i}, item); ok {
			blocks = append(blocks, b)
		}
	}
	return blocks
}

// block reads one {type: string, …} object.
func (p *payload) block(path []any, item json.RawMessage) (event.Block, bool) {
	var fields map[string]json.RawMessage
	if !isJSONObject(item) || json.Unmarshal(item, &fields) != nil {
		p.issues = append(p.issues, wrongType(path, "object", item, true))
		return event.Block{}, false
	}
	if raw, present := fields["type"]; !present || !isJSONString(raw) {
		p.issues = append(p.issues, wrongType(append(path, "type"), "string", raw, present))
		return event.Block{}, false
	}
	b, err := looseBlock(item)
	if err != nil {
		p.issues = append(p.issues, wrongType(path, "object", item, true))
		return event.Block{}, false
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

// oneOf reads a required string that must be one of values (session.prompt's
// mode) and returns it, or records an invalid_value issue.
func (p *payload) oneOf(name string, values ...string) string {
	raw, present := p.fields[name]
	var s string
	if present && isJSONString(raw) && json.Unmarshal(raw, &s) == nil {
		for _, v := range values {
			if s == v {
				return s
			}
		}
	}
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = jsonString(v)
	}
	p.add(issueInvalidValue, []any{name}, "expected one of "+strings.Join(quoted, ", "))
	return ""
}

// looseBlock reads a content block as the original's request schema does,
// z.looseObject({type: z.string()}): an object with a string type, whose
// parse is a new object holding type first, then its other keys in
// JavaScript's order (a "__proto__" key is not copied). It fails on
// anything else.
func looseBlock(data []byte) (event.Block, error) {
	v, err := jsjson.Parse(data)
	if err != nil {
		return event.Block{}, err
	}
	in := v.Object()
	if in == nil {
		return event.Block{}, errors.New("host: a content block must be an object")
	}
	typ, ok := in.Get("type")
	if !ok || typ.Kind() != jsjson.String {
		return event.Block{}, errors.New("host: a content block needs a string type")
	}
	out := jsjson.NewObj()
	out.Set("type", typ)
	for _, k := range in.Keys() {
		if k != "type" && k != "__proto__" {
			member, _ := in.Get(k)
			out.Set(k, member)
		}
	}
	var b event.Block
	err = b.UnmarshalJSON(jsjson.ObjectValue(out).Append(nil)) // a Block of what the parse wrote
	return b, err
}
