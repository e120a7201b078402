package session

import (
	"bytes"
)

// The log-line codec, for a Store written outside this package (the
// Postgres store is one) that must store and export exactly the bytes the
// JSONL store writes. No function blocks; a line carries no LF.

// HeaderLine checks a new session's header as the JSONL store's Create
// does and returns its log line.
func HeaderLine(h Header) ([]byte, error) {
	if err := validateNewHeader(h); err != nil {
		return nil, err
	}
	return appendHeader(nil, h), nil
}

// EventLines checks events as the JSONL store's Append does (they
// continue the log of id at seq next; no retired vocabulary; compact JSON
// payloads) and returns each one's log line as that store writes it.
func EventLines(id string, next int64, events []Event) ([][]byte, error) {
	data, err := encodeBatch(id, next, events, nil)
	if err != nil {
		return nil, err
	}
	return splitLines(data), nil
}

// LoadRepair is what the JSONL store's repairing Load does to a log read
// from where (a name for errors, as ReadLog's): it refuses, matching
// ErrCorrupt and in the same words, a log the original cannot build a
// session from (a relative cwd, events that break the surface rules);
// otherwise it returns the closers Load appends to a log whose final turn
// is open (a tool/result per pending call, step/end, turn/end
// {kind:"interrupted"}; none when it is closed), with their lines as that
// Load writes them.
func LoadRepair(log *Log, where string) ([]Event, [][]byte, error) {
	if err := checkResumable(log.Header, log.Events, where); err != nil {
		return nil, nil, err
	}
	closers := interruptedTurnClosers(log.Events)
	lines := make([][]byte, len(closers))
	for i, e := range closers {
		lines[i] = appendEvent(nil, e, true)
	}
	return closers, lines, nil
}

func splitLines(data []byte) [][]byte {
	lines := bytes.SplitAfter(data, []byte{'\n'})
	out := make([][]byte, 0, len(lines))
	for _, l := range lines {
		if len(l) > 0 {
			out = append(out, l[:len(l)-1])
		}
	}
	return out
}
