package session

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A small validating JSON lexer over one log line. It accepts exactly what
// JSON.parse accepts (insignificant whitespace, any bytes >= 0x20 inside
// strings) and hands out raw value slices without copying, which keeps
// Inspect fast on large logs.

const maxSafeInteger = 1<<53 - 1

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// scanValue returns the end of the JSON value starting at b[i] (no leading
// whitespace), or -1 when it is not valid JSON.
func scanValue(b []byte, i int) int {
	return scanValueDepth(b, i, 0)
}

const maxNesting = 10000

func scanValueDepth(b []byte, i, depth int) int {
	if i >= len(b) || depth > maxNesting {
		return -1
	}
	switch c := b[i]; {
	case c == '{':
		return scanObject(b, i, depth)
	case c == '[':
		return scanArray(b, i, depth)
	case c == '"':
		end, _ := scanString(b, i)
		return end
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(b, i)
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	}
	return -1
}

func scanLiteral(b []byte, i int, lit string) int {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	return -1
}

func scanObject(b []byte, i, depth int) int {
	return walkObject(b, i, depth, nil)
}

// walkObject validates the object at b[i] == '{' and returns its end (or
// -1), calling fn (when non-nil) with each member's unquoted key and raw
// value as it goes. A member seen before a syntax error has still been
// passed to fn.
func walkObject(b []byte, i, depth int, fn func(key, value []byte)) int {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		keyEnd, escaped := scanString(b, i)
		if keyEnd < 0 {
			return -1
		}
		colon := skipSpace(b, keyEnd)
		if colon >= len(b) || b[colon] != ':' {
			return -1
		}
		valStart := skipSpace(b, colon+1)
		valEnd := scanValueDepth(b, valStart, depth+1)
		if valEnd < 0 {
			return -1
		}
		if fn != nil {
			fn(unquote(b[i:keyEnd], escaped), b[valStart:valEnd])
		}
		if i = skipSpace(b, valEnd); i >= len(b) {
			return -1
		}
		if b[i] == '}' {
			return i + 1
		}
		if b[i] != ',' {
			return -1
		}
		i = skipSpace(b, i+1)
	}
}

// unquote returns the text of a raw JSON string (quotes stripped, escapes
// decoded when there are any).
func unquote(raw []byte, escaped bool) []byte {
	if !escaped {
		return raw[1 : len(raw)-1]
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil
	}
	return []byte(s)
}

func scanArray(b []byte, i, depth int) int {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		if i = scanValueDepth(b, i, depth+1); i < 0 {
			return -1
		}
		if i = skipSpace(b, i); i >= len(b) {
			return -1
		}
		if b[i] == ']' {
			return i + 1
		}
		if b[i] != ',' {
			return -1
		}
		i = skipSpace(b, i+1)
	}
}

// scanString returns the end of the string starting at b[i] == '"' and
// whether it contains escapes, or -1. Runs of plain bytes are skipped
// eight at a time.
func scanString(b []byte, i int) (int, bool) {
	escaped := false
	for i++; i < len(b); i++ {
		for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped
		case c < 0x20:
			return -1, false
		case c == '\\':
			escaped = true
			if i = scanEscape(b, i); i < 0 {
				return -1, false
			}
		}
	}
	return -1, false
}

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// plainWord reports whether none of the 8 bytes in x is a quote, a
// backslash or a control character (SWAR: a byte below n makes
// x - n*lsbs borrow into its high bit; false positives only follow a true
// match, and those are rechecked byte by byte).
func plainWord(x uint64) bool {
	below := func(x uint64, n uint64) uint64 { return (x - n*lsbs) & ^x & msbs }
	return below(x, 0x20)|below(x^('"'*lsbs), 1)|below(x^('\\'*lsbs), 1) == 0
}

// scanEscape validates the escape at b[i] == '\\' and returns the index of
// its last byte, or -1.
func scanEscape(b []byte, i int) int {
	if i+1 >= len(b) {
		return -1
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 1
	case 'u':
		if i+5 >= len(b) {
			return -1
		}
		for _, h := range b[i+2 : i+6] {
			if !isHex(h) {
				return -1
			}
		}
		return i + 5
	}
	return -1
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func scanDigits(b []byte, i int) int {
	start := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	if i == start {
		return -1
	}
	return i
}

func scanNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return -1
	}
	if b[i] == '0' {
		i++
	} else if i = scanDigits(b, i); i < 0 {
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i = scanDigits(b, i+1); i < 0 {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i = scanDigits(b, i); i < 0 {
			return -1
		}
	}
	return i
}

// forEachMember calls fn with the unquoted key and raw value of every
// member of the JSON object that makes up the whole of line (surrounding
// whitespace allowed), in one pass. It reports whether line is an object
// and whether it is one valid JSON value; results from fn are only
// meaningful when both are true.
func forEachMember(line []byte, fn func(key, value []byte)) (object, valid bool) {
	i := skipSpace(line, 0)
	if i >= len(line) {
		return false, false
	}
	var end int
	object = line[i] == '{'
	if object {
		end = walkObject(line, i, 0, fn)
	} else {
		end = scanValue(line, i)
	}
	return object, end >= 0 && skipSpace(line, end) == len(line)
}

// decodeString returns the string a raw JSON string value denotes. Invalid
// UTF-8 becomes U+FFFD, as when Node reads the file as UTF-8.
func decodeString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	end, escaped := scanString(raw, 0)
	if end != len(raw) {
		return "", false
	}
	if !escaped && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// hasLoneSurrogate reports whether the raw JSON string raw (valid, quoted)
// holds a \u escape of a UTF-16 surrogate that is not one half of a pair.
func hasLoneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		unit, ok := escapedUnit(raw, i)
		switch {
		case !ok:
			i++ // another escape: skip its character
		case utf16.IsSurrogate(rune(unit)) && unit < 0xDC00:
			low, paired := escapedUnit(raw, i+6)
			if !paired || low < 0xDC00 || low > 0xDFFF {
				return true
			}
			i += 11
		case utf16.IsSurrogate(rune(unit)):
			return true
		default:
			i += 5
		}
	}
	return false
}

// escapedUnit returns the code unit of the \uXXXX escape at raw[i], and
// whether there is one.
func escapedUnit(raw []byte, i int) (uint16, bool) {
	if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
	return uint16(n), err == nil
}

// parseSafeInt returns the integer a raw JSON number denotes when it is a
// safe integer (1.0 and 1e0 count, as with Number.isSafeInteger), and
// whether it is negative zero.
func parseSafeInt(raw []byte) (n int64, negZero, ok bool) {
	if len(raw) == 0 || (raw[0] != '-' && !isDigit(raw[0])) {
		return 0, false, false
	}
	if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return v, v == 0 && raw[0] == '-', v >= -maxSafeInteger && v <= maxSafeInteger
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
		return 0, false, false
	}
	return int64(f), f == 0 && math.Signbit(f), true
}

// isCompactJSON reports whether raw is one valid JSON value with no
// whitespace outside strings.
func isCompactJSON(raw []byte) bool {
	if len(raw) == 0 || scanValue(raw, 0) != len(raw) {
		return false
	}
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && isSpace(c):
			return false
		}
	}
	return true
}
