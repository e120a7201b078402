package session

import (
	"bytes"
	"strconv"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// scanned is the valid stored prefix of a log: the torn tail left out.
type scanned struct {
	header Header
	events []Event
	// cut is the file size a repair truncates to: the end of the last kept
	// line (raw), or the start of a torn final frame (Zstandard); the file
	// length when nothing is torn.
	cut int
	// recovered holds the complete lines a torn final frame still yielded
	// (Zstandard only): a repair appends them again as a fresh frame.
	recovered []byte
	// firstDropped is the line number (from 1, after the header) of the
	// first line not kept: where a cut begins.
	firstDropped int
	// badEnvelope is 1 + the index of the first kept event whose envelope
	// is invalid (errBadEnvelope), 0 when none is: validation (checkEvents)
	// refuses the log, wherever in it that event is.
	badEnvelope int
}

// scanLog reads a whole log file: the header line at load level, then the
// contiguous event prefix. A defect (unparsable line or seq gap) ends the
// prefix; it is fatal only when a later parsable line, or the defective
// row itself, holds a committed turn/end. A line that is valid JSON but
// not an object is fatal wherever it stands: no crash leaves one. An
// unterminated final fragment is a torn tail and is ignored.
func scanLog(buf []byte, path string) (scanned, error) {
	headerEnd := bytes.IndexByte(buf, '\n')
	if headerEnd < 0 {
		return scanned{}, corruptf(path, 0, "empty or header-less session log")
	}
	h, err := parseStoredHeader(buf[:headerEnd], path)
	if err != nil {
		return scanned{}, err
	}
	s := newScanner(path, h, headerEnd+1, len(buf))
	if err := s.lines(buf, headerEnd+1); err != nil {
		return scanned{}, withReadable(err, s.out.events)
	}
	s.out.cut = s.committed
	s.out.firstDropped = s.kept + 1
	return s.out, nil
}

func newScanner(path string, h Header, committed, size int) *scanner {
	s := &scanner{path: path, out: scanned{header: h}, committed: committed, names: typeNames{}}
	s.out.events = make([]Event, 0, estimateEvents(size))
	return s
}

// scanZstdLog reads a whole Zstandard log: every complete frame must hold
// whole valid lines (any defect there is fatal); the complete lines of a
// torn final frame are kept, to be written again by a repair.
func scanZstdLog(buf []byte, path string) (scanned, error) {
	z, err := decodeZstdLog(buf, path)
	if err != nil {
		return scanned{}, err
	}
	h, err := parseStoredHeader(z.plain[:z.header-1], path)
	if err != nil {
		return scanned{}, err
	}
	s := newScanner(path, h, z.header, len(z.plain))
	err = s.lines(z.plain[:z.complete], z.header)
	if err == nil && s.committed != z.complete {
		line := s.line + 1 // an unterminated fragment ends the frame
		if ce, ok := s.issue.(*corruptError); ok {
			line = ce.Line
		}
		err = corruptf(path, line, "corrupt Zstandard session log: complete frame contains a torn JSONL record")
	}
	if err != nil {
		return scanned{}, withReadable(framed(err, z.frameOf(s.damageAt())), s.out.events)
	}
	s.out.cut = len(buf)
	if z.torn < 0 {
		return s.out, nil
	}
	if err := s.lines(z.plain, z.complete); err != nil {
		return scanned{}, framed(err, z.torn)
	}
	s.out.cut, s.out.recovered = z.torn, z.plain[z.complete:s.committed]
	s.out.firstDropped = s.kept + 1
	return s.out, nil
}

// withReadable records in a *corruptError the events read before the
// damage (ReadablePrefix returns them).
func withReadable(err error, events []Event) error {
	if ce, ok := err.(*corruptError); ok {
		ce.readable = events
	}
	return err
}

// framed records in a *corruptError the frame the damage is in.
func framed(err error, frame int) error {
	if ce, ok := err.(*corruptError); ok && ce.FrameAt < 0 {
		ce.FrameAt = int64(frame)
	}
	return err
}

// estimateEvents guesses an event count from a file size to size the slice.
func estimateEvents(size int) int { return size/160 + 1 }

type scanner struct {
	path      string
	out       scanned
	committed int   // end of the last kept line's LF
	line      int   // event line number, from 1
	kept      int   // the number of the last kept line
	issue     error // the first defect, fatal if a committed turn/end follows
	issueAt   int   // plaintext offset of the line the issue is about
	row       []Event
	rowBad    bool // the row's event has an invalid envelope
	names     typeNames
}

func (s *scanner) lines(buf []byte, start int) error {
	for start < len(buf) {
		nl := bytes.IndexByte(buf[start:], '\n')
		if nl < 0 {
			return nil // torn tail: an unterminated final fragment
		}
		end := start + nl + 1
		if err := s.consume(buf[start:end-1], end); err != nil {
			return err
		}
		start = end
	}
	return nil
}

func (s *scanner) consume(line []byte, end int) error {
	s.line++
	if s.issue == nil {
		s.issueAt = end - len(line) - 1
	}
	var err error
	s.row, err = decodeRecord(line, s.row[:0], s.names)
	if s.rowBad = err == errBadEnvelope; s.rowBad {
		err = nil // a validation failure, not a scan one: the line is kept
	}
	if no, ok := err.(*errNotObject); ok {
		return corruptf(s.path, s.line, "corrupt session log: committed event at line %d is %s", s.line, no.Error())
	}
	gap, isGap := err.(*badSeq)
	if err != nil && !isGap {
		if s.issue == nil {
			s.issue = corruptf(s.path, s.line, "corrupt session log: unparsable committed event at line %d", s.line)
		}
		return nil
	}
	if s.issue != nil {
		if err == nil && hasTurnEnd(s.row) {
			return s.issue
		}
		return nil
	}
	if isGap {
		s.issue = s.gapError(len(s.out.events), gap.Got)
		if gap.Type == vocab.TypeTurnEnd {
			return s.issue
		}
		return nil
	}
	return s.keep(end)
}

// keep appends the decoded row when its seqs continue the prefix; a row
// with a seq gap is dropped whole and becomes the issue.
func (s *scanner) keep(end int) error {
	next := int64(len(s.out.events))
	for i, e := range s.row {
		if e.Seq != next+int64(i) {
			s.issue = s.gapError(len(s.out.events)+i, formatInt(e.Seq))
			if hasTurnEnd(s.row) {
				return s.issue
			}
			return nil
		}
	}
	if s.rowBad && s.out.badEnvelope == 0 {
		s.out.badEnvelope = len(s.out.events) + 1
	}
	s.out.events = append(s.out.events, s.row...)
	s.committed, s.kept = end, s.line
	return nil
}

// damageAt is the plaintext offset of the first defect: the issue's line,
// or else the unterminated fragment after the last kept line.
func (s *scanner) damageAt() int {
	if s.issue != nil {
		return s.issueAt
	}
	return s.committed
}

func (s *scanner) gapError(expected int, got string) error {
	return corruptf(s.path, s.line, "corrupt session log: seq gap in committed region at line %d (expected %d, got %s)",
		s.line, expected, got)
}

func hasTurnEnd(events []Event) bool {
	for _, e := range events {
		if e.Type == vocab.TypeTurnEnd {
			return true
		}
	}
	return false
}

// formatInt is strconv.FormatInt in base 10, for messages.
func formatInt(n int64) string { return strconv.FormatInt(n, 10) }
