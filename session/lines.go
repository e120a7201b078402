package session

import (
	"bytes"

	"github.com/dsh-actors/dsh-actors/internal/logline"
)

// The log-line codec for Fenced stores outside this package (Postgres),
// so that they store and export exactly the bytes the JSONL store writes:
// they take it from internal/logline, where it is registered here.
func init() {
	logline.Register(logline.Codec[Header, Event]{
		HeaderLine:      encodeHeaderLine,
		EventLines:      encodeEventLines,
		InterruptedTurn: interruptedTurnLines,
	})
}

// encodeHeaderLine checks a new session's header as Create does and returns its
// log line (without LF).
func encodeHeaderLine(h Header) ([]byte, error) {
	if err := validateNewHeader(h); err != nil {
		return nil, err
	}
	return appendHeader(nil, h), nil
}

// encodeEventLines checks events as Append does (they continue the log at seq
// next; no retired vocabulary; compact JSON payloads) and returns each
// one's log line (without LF) as the JSONL store writes it.
func encodeEventLines(id string, next int64, events []Event) ([][]byte, error) {
	data, err := encodeBatch(id, next, events, nil)
	if err != nil {
		return nil, err
	}
	return splitLines(data), nil
}

// interruptedTurnLines returns the closers Load appends to a log whose final
// turn is open (a tool/result per pending call, step/end, turn/end
// {kind:"interrupted"}; none when it is closed), with their lines as Load
// writes them.
func interruptedTurnLines(events []Event) ([]Event, [][]byte) {
	closers := interruptedTurnClosers(events)
	lines := make([][]byte, len(closers))
	for i, e := range closers {
		lines[i] = appendEvent(nil, e, true)
	}
	return closers, lines
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
