package storegen

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Header is a log's first line, the session's immutable facts. Empty
// strings and a zero SeedLength are left out of the line, as the store
// writes them.
type Header struct {
	ID              string
	CreatedAt       int64
	Cwd             string
	ParentSession   string
	SeedLength      int64
	Origin          string
	DelegationDepth int
}

// Event is one event line. Data and SurfaceOp are JSON written verbatim,
// so they must be compact and written as the format writes JSON (nil Data
// is written null, nil SurfaceOp left out).
type Event struct {
	Type            string
	Seq, Time       int64
	Data            json.RawMessage
	SourceEventSeqs []int64
	SurfaceOp       json.RawMessage
}

// Log is one session: its header and its events, whose Seq must be their
// index.
type Log struct {
	Header Header
	Events []Event
}

// logFileName is a session's log in its folder of a plain store.
const logFileName = "session.jsonl"

// errSeq is a log whose events do not number 0, 1, 2, …
var errSeq = errors.New("storegen: an event's seq is not its index")

// Write writes each log to its path under root (folders mode 0700, files
// 0600), overwriting a log there, and returns the bytes written. It
// blocks until every file is written; it fails on the first log whose
// path cannot be named or whose events do not number from 0.
func Write(root string, logs ...Log) (int64, error) {
	var written int64
	var buf []byte
	for _, log := range logs {
		path, err := logPath(root, log.Header.Cwd, log.Header.ID)
		if err != nil {
			return written, err
		}
		if buf, err = appendLog(buf[:0], log); err != nil {
			return written, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return written, err
		}
		if err := os.WriteFile(path, buf, 0o600); err != nil {
			return written, err
		}
		written += int64(len(buf))
	}
	return written, nil
}

// appendLog appends log's lines, each ending in LF, to buf.
func appendLog(buf []byte, log Log) ([]byte, error) {
	buf = appendHeader(buf, log.Header)
	for i, e := range log.Events {
		if e.Seq != int64(i) {
			return nil, errSeq
		}
		buf = appendEvent(buf, e)
	}
	return buf, nil
}

// appendHeader appends h's line: type, version, id, createdAt, cwd,
// parentSession, seedLength, origin, delegationDepth.
func appendHeader(buf []byte, h Header) []byte {
	buf = append(buf, `{"type":"session","version":0,"id":`...)
	buf = appendString(buf, h.ID)
	buf = strconv.AppendInt(append(buf, `,"createdAt":`...), h.CreatedAt, 10)
	buf = appendOptional(buf, "cwd", h.Cwd)
	buf = appendOptional(buf, "parentSession", h.ParentSession)
	if h.SeedLength != 0 {
		buf = strconv.AppendInt(append(buf, `,"seedLength":`...), h.SeedLength, 10)
	}
	buf = appendOptional(buf, "origin", h.Origin)
	buf = strconv.AppendInt(append(buf, `,"delegationDepth":`...), int64(h.DelegationDepth), 10)
	return append(buf, "}\n"...)
}

// appendEvent appends e's line: type, seq, time, data, sourceEventSeqs,
// surfaceOp.
func appendEvent(buf []byte, e Event) []byte {
	buf = appendString(append(buf, `{"type":`...), e.Type)
	buf = strconv.AppendInt(append(buf, `,"seq":`...), e.Seq, 10)
	buf = strconv.AppendInt(append(buf, `,"time":`...), e.Time, 10)
	buf = append(buf, `,"data":`...)
	if e.Data == nil {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, e.Data...)
	}
	if len(e.SourceEventSeqs) > 0 {
		buf = append(buf, `,"sourceEventSeqs":[`...)
		for i, seq := range e.SourceEventSeqs {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, seq, 10)
		}
		buf = append(buf, ']')
	}
	if e.SurfaceOp != nil {
		buf = append(append(buf, `,"surfaceOp":`...), e.SurfaceOp...)
	}
	return append(buf, "}\n"...)
}

func appendOptional(buf []byte, key, value string) []byte {
	if value == "" {
		return buf
	}
	buf = append(append(append(buf, `,"`...), key...), `":`...)
	return appendString(buf, value)
}

// appendString appends s as a JSON string the way the format writes one:
// only '"', '\' and control characters escaped (\b \f \n \r \t, else
// \u00xx in lower-case hex), nothing else, invalid UTF-8 as U+FFFD.
func appendString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for _, r := range s { // an invalid byte comes out as utf8.RuneError, U+FFFD
		switch {
		case r == '"' || r == '\\':
			buf = append(buf, '\\', byte(r))
		case r == '\b':
			buf = append(buf, `\b`...)
		case r == '\f':
			buf = append(buf, `\f`...)
		case r == '\n':
			buf = append(buf, `\n`...)
		case r == '\r':
			buf = append(buf, `\r`...)
		case r == '\t':
			buf = append(buf, `\t`...)
		case r < 0x20:
			buf = append(buf, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xF])
		default:
			buf = utf8.AppendRune(buf, r)
		}
	}
	return append(buf, '"')
}

// logPath is where the log of session id with cwd lives under root:
// <root>/<project folder>/<session folder>/session.jsonl.
func logPath(root, cwd, id string) (string, error) {
	if id == "" {
		return "", errors.New("storegen: a session id is empty")
	}
	project := "_no-cwd"
	if cwd != "" {
		project = projectKey(cwd)
	}
	return filepath.Join(root, project, encodeSegment(id), logFileName), nil
}

// encodeSegment is a session's folder name: over the id's UTF-16 code
// units, a unit in A–Z a–z 0–9 . _ - copied and any other escaped ~XXXX;
// "." and ".." escaped whole.
func encodeSegment(id string) string {
	switch id {
	case ".":
		return "~002E"
	case "..":
		return "~002E~002E"
	}
	var out []byte
	for _, u := range utf16.Encode([]rune(id)) {
		out = appendUnit(out, u)
	}
	return string(out)
}

// projectKey is the project folder of cwd: over its UTF-16 code units, a
// run of '/', '\' and ':' becomes one '-', a safe unit is copied and any
// other escaped ~XXXX; leading '-' are dropped (nothing left is "root"),
// and the slug, cut to 251 bytes, is written --slug--.
func projectKey(cwd string) string {
	var slug []byte
	separators := false
	for _, u := range utf16.Encode([]rune(cwd)) {
		if u == '/' || u == '\\' || u == ':' {
			if !separators {
				slug = append(slug, '-')
			}
			separators = true
			continue
		}
		slug, separators = appendUnit(slug, u), false
	}
	for len(slug) > 0 && slug[0] == '-' {
		slug = slug[1:]
	}
	if len(slug) == 0 {
		slug = []byte("root")
	}
	return "--" + string(slug[:min(len(slug), 251)]) + "--"
}

// appendUnit appends one UTF-16 code unit of a path segment: copied when
// it is in A–Z a–z 0–9 . _ -, else ~ and four upper-case hex digits.
func appendUnit(out []byte, u uint16) []byte {
	if (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || u == '.' || u == '_' || u == '-' {
		return append(out, byte(u))
	}
	const hex = "0123456789ABCDEF"
	return append(out, '~', hex[u>>12], hex[u>>8&0xF], hex[u>>4&0xF], hex[u&0xF])
}
