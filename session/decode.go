package session

import (
	"bytes"
	"encoding/json"
	"errors"
)

// errUnparsable marks a line that is not a usable storage record: invalid
// JSON, a malformed packed row, or an envelope Event cannot represent.
var errUnparsable = errors.New("unparsable storage record")

// errBadEnvelope marks an event line whose envelope the original refuses
// when it validates a stored log (not when it scans it): a key other than
// the seven an event has, a type that is not a string, no data, a time
// that is not a safe integer, or an ignorable that is not true. The event
// is decoded all the same (a type that is not a string as JavaScript
// prints it); the read refuses the log if it keeps the event (checkEnvelope).
var errBadEnvelope = errors.New("invalid event envelope")

// badSeq is a record whose seq is not a non-negative safe integer; Got is
// the value as JavaScript's String() would print it.
type badSeq struct{ Type, Got string }

func (b *badSeq) Error() string { return "seq is not an integer: " + b.Got }

// errNotObject is a line that is valid JSON but not an object (a number,
// a string, an array, true, false or null): no torn write leaves one,
// since every record begins with "{", so it is damage wherever it stands.
type errNotObject struct{ Kind string }

func (e *errNotObject) Error() string { return "not a JSON object but " + e.Kind }

// nonObject is the errNotObject of the valid JSON value line, naming its
// kind as a reader would: "a number", "a string", "an array", "a boolean"
// or "null".
func nonObject(line []byte) *errNotObject {
	kind := "a number"
	switch line[skipSpace(line, 0)] {
	case '"':
		kind = "a string"
	case '[':
		kind = "an array"
	case 't', 'f':
		kind = "a boolean"
	case 'n':
		kind = "null"
	}
	return &errNotObject{Kind: kind}
}

// decodeRecord appends the events stored on one log line to dst: one event,
// or the members of a packed chunk row (see packed.go). An event with an
// invalid envelope is appended and reported as errBadEnvelope.
// Event type names are interned through names (nil: no interning).
func decodeRecord(line []byte, dst []Event, names typeNames) ([]Event, error) {
	var env envelope
	object, valid := forEachMember(line, env.member)
	if !valid {
		return dst, errUnparsable
	}
	if !object {
		return dst, nonObject(line)
	}
	env.typ, env.typeIsText = names.get(env.typeRaw)
	if !env.typeIsText {
		env.typ = jsString(env.typeRaw)
	}
	if rowTags[env.typ] {
		return decodeRow(&env, dst)
	}
	e, err := env.event()
	if err != nil {
		return dst, err
	}
	if env.invalid() {
		return append(dst, e), errBadEnvelope
	}
	return append(dst, e), nil
}

// typeNames interns event type names: a log repeats a few dozen types,
// so each is allocated once per read.
type typeNames map[string]string

func (names typeNames) get(raw []byte) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		if name, ok := names[string(raw[1:len(raw)-1])]; ok {
			return name, true
		}
	}
	name, ok := decodeString(raw)
	if ok && names != nil && len(names) < 1024 {
		names[name] = name
	}
	return name, ok
}

// envelope holds the raw members of one record line.
type envelope struct {
	typ                        string
	typeRaw, seq, time, data   []byte
	sources, surfaceOp, ignore []byte
	seq0, time0                []byte
	keys                       int
	hasData, typeIsText        bool
	timeIsInt                  bool // set by event()
	// foreign counts the keys an event envelope may not have: any but
	// type, seq, time, data, sourceEventSeqs, surfaceOp, ignorable (a
	// packed row's seq0 and time0 included).
	foreign int
}

func (env *envelope) member(key, value []byte) {
	env.keys++
	switch string(key) {
	case "type":
		env.typeRaw = value
	case "seq":
		env.seq = value
	case "time":
		env.time = value
	case "data":
		env.hasData = true
		env.data = value
	case "sourceEventSeqs":
		env.sources = value
	case "surfaceOp":
		env.surfaceOp = value
	case "ignorable":
		env.ignore = value
	case "seq0":
		env.foreign++
		env.seq0 = value
	case "time0":
		env.foreign++
		env.time0 = value
	default:
		env.foreign++
	}
}

// invalid reports whether an event's envelope is one the original refuses
// on reading a stored log, once event() has read it: a foreign key, a type
// that is not a string, no data, a time that is not a safe integer, or an
// ignorable other than true (whatever its value, a stored ignorable must
// be exactly true).
func (env *envelope) invalid() bool {
	return env.foreign > 0 || !env.typeIsText || !env.hasData || !env.timeIsInt ||
		env.ignore != nil && string(env.ignore) != "true"
}

// event reads the envelope as one event. Only a seq that is not a
// non-negative safe integer fails it (a seq gap, as the original's scan
// finds); what else the original refuses at validation, invalid reports.
func (env *envelope) event() (Event, error) {
	seq, _, ok := parseSafeInt(env.seq)
	if !ok || seq < 0 {
		return Event{}, &badSeq{Type: env.typ, Got: jsString(env.seq)}
	}
	var t int64
	t, _, env.timeIsInt = parseSafeInt(env.time)
	e := Event{Type: env.typ, Seq: seq, Time: t, Data: json.RawMessage(env.data)}
	if env.surfaceOp != nil {
		e.SurfaceOp = json.RawMessage(env.surfaceOp)
	}
	if env.sources != nil {
		if e.SourceEventSeqs, ok = parseIntArray(env.sources); !ok {
			return Event{}, errUnparsable
		}
	}
	e.Ignorable = string(env.ignore) == "true"
	return e, nil
}

func parseIntArray(raw []byte) ([]int64, bool) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	out := []int64{}
	ok := true
	forEachElement(raw, func(v []byte) {
		n, _, isInt := parseSafeInt(v)
		ok = ok && isInt
		out = append(out, n)
	})
	return out, ok
}

// forEachElement calls fn for each element of a validated JSON array.
func forEachElement(arr []byte, fn func(v []byte)) {
	i := skipSpace(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		end := scanValue(arr, i)
		fn(arr[i:end])
		i = skipSpace(arr, end)
		if arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
}

// jsString prints a raw JSON value the way JavaScript's String() prints the
// parsed value, for error messages (a missing value is "undefined").
func jsString(raw []byte) string {
	if raw == nil {
		return "undefined"
	}
	if s, ok := decodeString(raw); ok {
		return s
	}
	if raw[0] == '{' {
		return "[object Object]"
	}
	return string(raw)
}

// UnmarshalJSON parses a header line as List does: any numeric version is
// accepted, unknown keys are ignored, anything that fails the listing guard
// (parseHeaderLine's listable) is an error matching ErrCorrupt, and so is a
// header List refuses (a retired sandboxMode/approvalPolicy key, an empty
// cwd); one List skips because it holds a lone UTF-16 surrogate is an
// error matching neither.
func (h *Header) UnmarshalJSON(b []byte) error {
	hl, _ := parseHeaderLine(b)
	if !hl.listable {
		return &corruptError{FrameAt: -1, Msg: "corrupt session log: first line is not a session header"}
	}
	if err := hl.listingError(""); err != nil {
		return err
	}
	if err := hl.unrepresentable(""); err != nil {
		return err
	}
	*h = hl.header
	return nil
}

// UnmarshalJSON parses one event envelope (not a packed chunk row): a key
// other than the seven an event has, or an ignorable other than true, is
// an error. Data and SurfaceOp keep their raw bytes.
func (e *Event) UnmarshalJSON(b []byte) error {
	var env envelope
	object, valid := forEachMember(b, env.member)
	env.typ, env.typeIsText = typeNames(nil).get(env.typeRaw)
	if !valid || !object || rowTags[env.typ] {
		return &corruptError{FrameAt: -1, Msg: "corrupt session log: not a session event"}
	}
	parsed, err := env.event()
	if err == nil && env.invalid() {
		err = errBadEnvelope
	}
	if err != nil {
		return &corruptError{FrameAt: -1, Msg: "corrupt session log: invalid session event: " + err.Error()}
	}
	parsed.Data = append(json.RawMessage(nil), parsed.Data...)
	parsed.SurfaceOp = append(json.RawMessage(nil), parsed.SurfaceOp...)
	*e = parsed
	return nil
}
