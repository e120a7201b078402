package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/dsh-actors/dsh-actors/internal/jsjson"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as JavaScript's
// JSON.stringify writes it: only `"`, `\` and control characters are
// escaped (\b \f \n \r \t, else \u00xx), no HTML escaping, U+2028 and U+2029
// raw. Invalid UTF-8 becomes U+FFFD.
func appendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			buf = append(buf, s[start:i]...)
			buf = append(buf, "\ufffd"...)
			i++
			start = i
			continue
		}
		buf = append(buf, s[start:i]...)
		buf = appendEscape(buf, c)
		i++
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

func appendEscape(buf []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(buf, '\\', c)
	case '\b':
		return append(buf, '\\', 'b')
	case '\f':
		return append(buf, '\\', 'f')
	case '\n':
		return append(buf, '\\', 'n')
	case '\r':
		return append(buf, '\\', 'r')
	case '\t':
		return append(buf, '\\', 't')
	}
	return append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// appendHeader appends the header line (without LF) with the original's key
// order; optional keys are omitted when zero, delegationDepth always written.
func appendHeader(buf []byte, h Header) []byte {
	buf = append(buf, `{"type":"session","version":`...)
	buf = strconv.AppendInt(buf, int64(h.Version), 10)
	buf = append(buf, `,"id":`...)
	buf = appendJSONString(buf, h.ID)
	buf = append(buf, `,"createdAt":`...)
	buf = strconv.AppendInt(buf, h.CreatedAt, 10)
	buf = appendOptionalString(buf, `,"cwd":`, h.Cwd)
	buf = appendOptionalString(buf, `,"parentSession":`, h.ParentSession)
	if h.SeedLength != nil {
		buf = append(buf, `,"seedLength":`...)
		buf = strconv.AppendInt(buf, int64(*h.SeedLength), 10)
	}
	buf = appendOptionalString(buf, `,"origin":`, h.Origin)
	buf = append(buf, `,"delegationDepth":`...)
	buf = strconv.AppendInt(buf, int64(h.DelegationDepth), 10)
	buf = appendOptionalString(buf, `,"agentPreset":`, h.AgentPreset)
	return append(buf, '}')
}

func appendOptionalString(buf []byte, key, value string) []byte {
	if value == "" {
		return buf
	}
	return appendJSONString(append(buf, key...), value)
}

// appendEvent appends one event line (without LF). The writer's order is
// sourceEventSeqs before surfaceOp; crash-repair closers use the opposite
// order (surfaceFirst), as the original writes them.
func appendEvent(buf []byte, e Event, surfaceFirst bool) []byte {
	buf = append(buf, `{"type":`...)
	buf = appendJSONString(buf, e.Type)
	buf = append(buf, `,"seq":`...)
	buf = strconv.AppendInt(buf, e.Seq, 10)
	buf = append(buf, `,"time":`...)
	buf = strconv.AppendInt(buf, e.Time, 10)
	buf = append(buf, `,"data":`...)
	if len(e.Data) == 0 {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, e.Data...)
	}
	if surfaceFirst {
		buf = appendSurfaceOp(buf, e.SurfaceOp)
		buf = appendSources(buf, e.SourceEventSeqs)
	} else {
		buf = appendSources(buf, e.SourceEventSeqs)
		buf = appendSurfaceOp(buf, e.SurfaceOp)
	}
	if e.Ignorable {
		buf = append(buf, `,"ignorable":true`...)
	}
	return append(buf, '}')
}

func appendSources(buf []byte, seqs []int64) []byte {
	if seqs == nil {
		return buf
	}
	buf = append(buf, `,"sourceEventSeqs":[`...)
	for i, s := range seqs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, s, 10)
	}
	return append(buf, ']')
}

func appendSurfaceOp(buf []byte, op json.RawMessage) []byte {
	if op == nil {
		return buf
	}
	return append(append(buf, `,"surfaceOp":`...), op...)
}

// MarshalJSON writes the header line exactly as the original harness does:
// keys type, version, id, createdAt, cwd?, parentSession?, seedLength?,
// origin?, delegationDepth, agentPreset?; no HTML escaping. Note that
// json.Marshal re-escapes <, >, & and U+2028/U+2029 in any MarshalJSON
// output; call MarshalJSON directly or use a json.Encoder with
// SetEscapeHTML(false) to get these exact bytes.
func (h Header) MarshalJSON() ([]byte, error) {
	return appendHeader(nil, h), nil
}

// MarshalJSON writes the event envelope
// {type, seq, time, data[, sourceEventSeqs][, surfaceOp][, ignorable]}.
// Data and SurfaceOp are written verbatim; they must be compact valid JSON
// (encodeData produces such bytes). The json.Marshal caveat of
// Header.MarshalJSON applies.
func (e Event) MarshalJSON() ([]byte, error) {
	if err := checkRaw("data", e.Data); err != nil {
		return nil, err
	}
	if err := checkRaw("surfaceOp", e.SurfaceOp); err != nil {
		return nil, err
	}
	return appendEvent(nil, e, false), nil
}

func checkRaw(name string, raw json.RawMessage) error {
	if raw == nil || isCompactJSON(raw) {
		return nil
	}
	return fmt.Errorf("session: event %s is not compact valid JSON", name)
}

// encodeData turns an event payload into compact JSON as JSON.stringify
// would write it, through the one codec that writes those bytes
// (jsjson.Marshal): no HTML escaping, U+2028/U+2029 raw, no insignificant
// whitespace. A json.RawMessage or []byte is taken as JSON text and
// compacted (a vocab.Owned one is kept without a copy when it is compact
// already); any other value goes through encoding/json (so a Go map's keys
// come out sorted; use a struct or RawMessage to choose the key order).
func encodeData(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case json.RawMessage:
		return compactJSON(x)
	case []byte:
		return compactJSON(x)
	case vocab.Owned:
		if isCompactText(x) {
			return json.RawMessage(x[:len(x):len(x)]), nil // no spare room to append into
		}
		return compactJSON(x)
	}
	raw, err := jsjson.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("session: event data is not JSON-serializable: %w", err)
	}
	return raw, nil
}

// isCompactText reports whether raw is valid JSON text that compactJSON
// would return as it is: compact, with no escaped line separator.
func isCompactText(raw []byte) bool {
	return isCompactJSON(raw) && !bytes.Contains(raw, []byte(`\u202`))
}

// compactJSON validates JSON text and returns a compact copy of it. Text
// already compact and free of escaped line separators (the common case)
// is copied as it is, without a pass through encoding/json.
func compactJSON(raw []byte) (json.RawMessage, error) {
	if isCompactText(raw) {
		return bytes.Clone(raw), nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, fmt.Errorf("session: event data is not valid JSON: %w", err)
	}
	return jsjson.Marshal(json.RawMessage(compact.Bytes()))
}
