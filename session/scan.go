package session

import (
	"bytes"
	"strconv"

	"github.com/dsh-actors/dsh-actors/event"
)

// scanned is the valid stored prefix of a raw log: the torn tail left out.
type scanned struct {
	header    Header
	events    []Event
	committed int // bytes up to and including the last kept line's LF
}

// scanLog reads a whole log file: the header line at load level, then the
// contiguous event prefix. A defect (unparsable line or seq gap) ends the
// prefix; it is fatal only when a later parsable line, or the defective
// row itself, holds a committed turn/end. An unterminated final fragment is
// a torn tail and is ignored.
func scanLog(buf []byte, path string) (scanned, error) {
	headerEnd := bytes.IndexByte(buf, '\n')
	if headerEnd < 0 {
		return scanned{}, corruptf(path, 0, "empty or header-less session log")
	}
	h, err := parseStoredHeader(buf[:headerEnd], path)
	if err != nil {
		return scanned{}, err
	}
	s := scanner{path: path, out: scanned{header: h, committed: headerEnd + 1}, names: typeNames{}}
	s.out.events = make([]Event, 0, estimateEvents(len(buf)))
	if err := s.lines(buf, headerEnd+1); err != nil {
		return scanned{}, err
	}
	return s.out, nil
}

// estimateEvents guesses an event count from a file size to size the slice.
func estimateEvents(size int) int { return size/160 + 1 }

type scanner struct {
	path  string
	out   scanned
	line  int   // event line number, from 1
	issue error // the first defect, fatal if a committed turn/end follows
	row   []Event
	names typeNames
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
	var err error
	s.row, err = decodeRecord(line, s.row[:0], s.names)
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
		if gap.Type == event.TypeTurnEnd {
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
	s.out.events = append(s.out.events, s.row...)
	s.out.committed = end
	return nil
}

func (s *scanner) gapError(expected int, got string) error {
	return corruptf(s.path, s.line, "corrupt session log: seq gap in committed region at line %d (expected %d, got %s)",
		s.line, expected, got)
}

func hasTurnEnd(events []Event) bool {
	for _, e := range events {
		if e.Type == event.TypeTurnEnd {
			return true
		}
	}
	return false
}

// formatInt is strconv.FormatInt in base 10, for messages.
func formatInt(n int64) string { return strconv.FormatInt(n, 10) }
