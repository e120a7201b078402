package llm

import (
	"bytes"
	"errors"
	"io"
)

// doneSentinel is the data payload that ends a chat-completions stream.
const doneSentinel = "[DONE]"

// maxEventBytes bounds one SSE event's data; a longer event is a malformed
// response rather than unbounded memory.
const maxEventBytes = 64 << 20

// errStreamClosed is a stream that ended before [DONE], an unterminated
// last event included.
var errStreamClosed = newError("SSE stream ended without [DONE]", CodeStreamClosed, nil)

// sseReader splits a text/event-stream into the data payloads of its
// events, as the WHATWG EventSource parser does: lines end at CR, LF or
// CRLF; a leading byte-order mark is dropped; lines starting with ":" are
// comments; a field's value follows its first ":" minus one leading space;
// the "data" lines of an event are joined with "\n"; an event is
// dispatched at a blank line, and only when it had a data line. Other
// fields (event, id, retry) are ignored.
type sseReader struct {
	src     io.Reader
	buf     []byte // unread bytes are buf[start:]
	start   int
	eof     bool
	readErr error
	skipLF  bool // the last line ended with CR: a following LF belongs to it
	begun   bool // the byte-order mark check is done
	data    []byte
	hasData bool
	events  int // dispatched so far
}

func newSSEReader(src io.Reader) *sseReader {
	return &sseReader{src: src, buf: make([]byte, 0, 32<<10)}
}

// next returns the next event's data, valid until the next call. At the
// end of the input it returns errStreamClosed (an unterminated event is
// dropped), or the read error that ended it.
func (r *sseReader) next() ([]byte, error) {
	for {
		line, err := r.line()
		if err != nil {
			return nil, err
		}
		if data, ok, err := r.field(line); err != nil || ok {
			return data, err
		}
	}
}

// field applies one line to the pending event and reports a dispatched
// event's data (valid until the next line is applied).
func (r *sseReader) field(line []byte) ([]byte, bool, error) {
	if len(line) == 0 {
		if !r.hasData {
			return nil, false, nil
		}
		data := r.data
		r.data, r.hasData = r.data[:0], false
		r.events++
		return data, true, nil
	}
	if line[0] == ':' {
		return nil, false, nil
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		value = bytes.TrimPrefix(value, []byte{' '})
	}
	if string(name) != "data" {
		return nil, false, nil
	}
	if r.hasData {
		r.data = append(r.data, '\n')
	}
	if len(r.data)+len(value) > maxEventBytes {
		return nil, false, newError("SSE event exceeds 64 MiB", CodeMalformedResponse, nil)
	}
	r.data, r.hasData = append(r.data, value...), true
	return nil, false, nil
}

// line returns the next complete line without its terminator; the
// returned slice is valid until the next call.
func (r *sseReader) line() ([]byte, error) {
	for {
		if err := r.dropPrefix(); err != nil {
			return nil, err
		}
		rest := r.buf[r.start:]
		if i := bytes.IndexAny(rest, "\r\n"); i >= 0 {
			r.start += i + 1
			r.skipLF = rest[i] == '\r'
			return rest[:i], nil
		}
		if len(rest) > maxEventBytes {
			return nil, newError("SSE line exceeds 64 MiB", CodeMalformedResponse, nil)
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// dropPrefix skips the LF of a CRLF split across lines and a leading
// byte-order mark, reading as much as it needs to decide.
func (r *sseReader) dropPrefix() error {
	for r.skipLF || !r.begun {
		rest := r.buf[r.start:]
		switch {
		case r.skipLF && len(rest) > 0:
			r.skipLF = false
			if rest[0] == '\n' {
				r.start++
			}
		case !r.skipLF && len(rest) >= 3 || !r.skipLF && r.eof:
			r.begun = true
			if bytes.HasPrefix(rest, []byte("\uFEFF")) {
				r.start += 3
			}
		default:
			if err := r.fill(); err != nil {
				return err
			}
		}
	}
	return nil
}

// fill reads more input, compacting the buffer first. At the end of the
// input it returns errStreamClosed, or the read error.
func (r *sseReader) fill() error {
	if r.eof {
		if r.readErr != nil {
			return r.readErr
		}
		return errStreamClosed
	}
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:])
		r.buf, r.start = r.buf[:n], 0
	}
	if len(r.buf) == cap(r.buf) {
		r.buf = append(r.buf, make([]byte, cap(r.buf))...)[:len(r.buf)]
	}
	n, err := r.src.Read(r.buf[len(r.buf):cap(r.buf)])
	r.buf = r.buf[:len(r.buf)+n]
	if err != nil {
		r.eof = true
		if !errors.Is(err, io.EOF) {
			r.readErr = err
		}
		if n == 0 {
			return r.fill()
		}
	}
	return nil
}
