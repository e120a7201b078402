package manager

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The turn/start and turn/end payloads the capture reads are tiny objects
// the runtime writes itself ({"turn":N,"reason":{"kind":"..."}}). Decoding
// them with encoding/json's reflection was most of a drained child's
// capture cost, so they are read here byte by byte. The fast path only
// answers for payloads it reads exactly as json.Unmarshal would (valid
// JSON, each wanted key present at most once and spelled exactly,
// integer turn, unescaped kind); anything else falls back to
// json.Unmarshal, so the result never differs.

// decodeTurnEnd reads a turn/end payload; false when json.Unmarshal fails.
// With valid, data is known to be valid JSON (a session's events always
// are) and is not checked again.
func decodeTurnEnd(data []byte, valid bool) (turnEnd, bool) {
	if n, kind, ok := canonical(data, `,"reason":{"kind":"`, `"}}`); ok {
		var end turnEnd
		end.Turn, end.Reason.Kind = n, knownKind(kind)
		return end, true
	}
	return scanTurnEnd(data, valid)
}

// scanTurnEnd is decodeTurnEnd off the canonical path (kept apart so the
// canonical path's result does not escape to the heap).
func scanTurnEnd(data []byte, valid bool) (turnEnd, bool) {
	var end turnEnd
	if (valid || json.Valid(data)) && fastTurnEnd(data, &end) {
		return end, true
	}
	end = turnEnd{}
	return end, json.Unmarshal(data, &end) == nil
}

// startTrigger is a turn/start's trigger: whether it has one (not absent
// or null), and its kind.
type startTrigger struct {
	present bool
	kind    string
}

// decodeTurnStart reads a turn/start payload; false when json.Unmarshal
// fails. valid is as for decodeTurnEnd.
func decodeTurnStart(data []byte, valid bool) (turn int64, trigger startTrigger, ok bool) {
	if n, _, ok := canonical(data, `,"trigger":{"kind":"message","source":{"kind":"`, `"}}}`); ok {
		return n, startTrigger{present: true, kind: "message"}, true
	}
	if n, kind, ok := canonical(data, `,"trigger":{"kind":"`, `"}}`); ok {
		return n, startTrigger{present: true, kind: knownKind(kind)}, true
	}
	if valid || json.Valid(data) {
		if turn, trigger, ok := fastTurnStart(data); ok {
			return turn, trigger, true
		}
	}
	var start turnStart
	if json.Unmarshal(data, &start) != nil {
		return 0, startTrigger{}, false
	}
	if start.Trigger != nil {
		return start.Turn, startTrigger{present: true, kind: start.Trigger.Kind}, true
	}
	return start.Turn, startTrigger{}, true
}

// canonical reads the exact bytes the runtime itself writes for a turn's
// start and end, {"turn":N<middle>K<end> (middle opens the innermost
// {"kind":K} and end closes every object), with N a plain non-negative
// integer and K made of lower-case letters and dashes: such bytes are valid
// JSON, and json.Unmarshal reads them as turn N and the kinds they spell.
// Anything else is false, for the general path.
func canonical(data []byte, middle, end string) (turn int64, kind []byte, ok bool) {
	rest, ok := bytes.CutPrefix(data, []byte(`{"turn":`))
	if !ok {
		return 0, nil, false
	}
	digits := 0
	for digits < len(rest) && digits < 18 && rest[digits] >= '0' && rest[digits] <= '9' {
		turn = turn*10 + int64(rest[digits]-'0')
		digits++
	}
	if digits == 0 || (digits > 1 && rest[0] == '0') {
		return 0, nil, false
	}
	rest, ok = bytes.CutPrefix(rest[digits:], []byte(middle))
	if !ok {
		return 0, nil, false
	}
	k, ok := bytes.CutSuffix(rest, []byte(end))
	if !ok || len(k) == 0 {
		return 0, nil, false
	}
	for _, c := range k {
		if (c < 'a' || c > 'z') && c != '-' {
			return 0, nil, false
		}
	}
	return turn, k, true
}

// knownKind is string(k), without allocating for the kinds the runtime
// itself writes.
func knownKind(k []byte) string {
	switch string(k) {
	case "message":
		return "message"
	case "completed":
		return "completed"
	case "aborted":
		return "aborted"
	case "error":
		return "error"
	case "max-tokens":
		return "max-tokens"
	case "refusal":
		return "refusal"
	}
	return string(k)
}

// fastTurnEnd reads the valid JSON data; false to fall back.
func fastTurnEnd(data []byte, end *turnEnd) bool {
	seenTurn, seenReason := false, false
	return members(data, func(key, val []byte) bool {
		switch {
		case string(key) == "turn" && !seenTurn:
			seenTurn = true
			n, ok := integer(val)
			end.Turn = n
			return ok
		case string(key) == "reason" && !seenReason:
			seenReason = true
			if string(val) == "null" {
				return true
			}
			kind, ok := kindOf(val)
			end.Reason.Kind = kind
			return ok
		}
		return unrelated(key, "turn", "reason")
	})
}

// fastTurnStart reads the valid JSON data; false to fall back.
func fastTurnStart(data []byte) (int64, startTrigger, bool) {
	var turn int64
	var trigger startTrigger
	seenTurn, seenTrigger := false, false
	ok := members(data, func(key, val []byte) bool {
		switch {
		case string(key) == "turn" && !seenTurn:
			seenTurn = true
			n, ok := integer(val)
			turn = n
			return ok
		case string(key) == "trigger" && !seenTrigger:
			seenTrigger = true
			if string(val) == "null" {
				return true
			}
			kind, ok := kindOf(val)
			trigger = startTrigger{present: true, kind: kind}
			return ok
		}
		return unrelated(key, "turn", "trigger")
	})
	return turn, trigger, ok
}

// kindOf reads {"kind":"..."} (other members ignored); false to fall back.
func kindOf(val []byte) (string, bool) {
	var kind string
	seen := false
	ok := len(val) > 0 && val[0] == '{' && members(val, func(key, v []byte) bool {
		switch {
		case string(key) == "kind" && !seen:
			seen = true
			if string(v) == "null" {
				return true
			}
			s, ok := plainString(v)
			kind = s
			return ok
		}
		return unrelated(key, "kind")
	})
	return kind, ok
}

// unrelated reports whether key cannot match any wanted field under
// encoding/json's case-insensitive matching (true: skip it safely).
func unrelated(key []byte, wanted ...string) bool {
	if bytes.IndexByte(key, '\\') >= 0 || !isASCII(key) {
		return false // an escape or a Unicode fold could still match
	}
	for _, w := range wanted {
		if bytes.EqualFold(key, []byte(w)) {
			return false
		}
	}
	return true
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// integer reads a JSON integer literal that fits int64 (null is zero).
func integer(val []byte) (int64, bool) {
	if string(val) == "null" {
		return 0, true
	}
	if bytes.ContainsAny(val, ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(string(val), 10, 64)
	return n, err == nil
}

// plainString reads a JSON string without escapes, in valid UTF-8
// (json.Unmarshal would replace invalid bytes).
func plainString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' || bytes.IndexByte(val, '\\') >= 0 || !utf8.Valid(val) {
		return "", false
	}
	return string(val[1 : len(val)-1]), true
}

// members calls fn with each member of the valid JSON object data (key
// without quotes, raw value without surrounding space) until fn returns
// false; false when data is not an object or fn refused.
func members(data []byte, fn func(key, val []byte) bool) bool {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return true
	}
	for i < len(data) && data[i] == '"' {
		keyEnd := endOfString(data, i)
		key := data[i+1 : keyEnd-1]
		i = skipWS(data, keyEnd)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipWS(data, i+1)
		valEnd := endOfValue(data, i)
		if !fn(key, data[i:valEnd]) {
			return false
		}
		i = skipWS(data, valEnd)
		if i >= len(data) || data[i] != ',' {
			return i < len(data) && data[i] == '}'
		}
		i = skipWS(data, i+1)
	}
	return false
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// endOfString is the index after the string opening at b[i] (b valid).
func endOfString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// endOfValue is the index after the value starting at b[i] (b valid).
func endOfValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			i = endOfString(b, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return i
}
