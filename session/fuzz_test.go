package session

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const fuzzHeader = `{"type":"session","version":0,"id":"f","createdAt":1,"delegationDepth":0}` + "\n"

// FuzzScanLog checks the JSONL reader: it never panics, and reading any
// prefix of a log yields a prefix of the events of the whole log (and
// never an error when the whole log reads cleanly).
func FuzzScanLog(f *testing.F) {
	f.Add(strings.Join(openTurnLines, "\n") + "\n")
	f.Add(lines(openTurnLines[0], "garbage", `{"type":"turn/end","seq":1,"time":1,"data":{}}`))
	f.Add(lines(`{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[0,1],"texts":["a","b","c"]}}`))
	f.Add(`{"type":"x","seq":0,"time":1,"data":{"s":"\u00e9\n"},"sourceEventSeqs":[],"ignorable":true}` + "\n\n{")
	f.Add(lines(openTurnLines[0], `{"type":7,"seq":1,"time":1,"data":{}}`, `{"type":"turn/end","seq":2,"time":1,"data":{}}`))
	f.Fuzz(func(t *testing.T, body string) {
		whole, wholeErr := scanLog([]byte(fuzzHeader+body), "p")
		for _, cut := range cuts(len(body)) {
			part, err := scanLog([]byte(fuzzHeader+body[:cut]), "p")
			if wholeErr != nil {
				continue
			}
			require.NoError(t, err, "cut %d", cut)
			require.LessOrEqual(t, len(part.events), len(whole.events))
			require.Equal(t, whole.events[:len(part.events)], part.events, "cut %d", cut)
			require.LessOrEqual(t, part.cut, len(fuzzHeader)+cut)
		}
	})
}

// FuzzHeaderLine checks header parsing: it never panics, and a header that
// passes the listing guard survives a write and a re-read unchanged.
func FuzzHeaderLine(f *testing.F) {
	f.Add(strings.TrimSuffix(fuzzHeader, "\n"))
	f.Add(`{"type":"session","version":0,"id":"a\u2028","createdAt":1e3,"cwd":"/x","parentSession":"p",` +
		`"seedLength":2,"origin":"subagent","delegationDepth":1,"agentPreset":"ap","extra":[1]}`)
	f.Add(`{"type":"session","version":9,"id":1}`)
	f.Add(`42`)
	f.Fuzz(func(t *testing.T, line string) {
		_, _ = parseStoredHeader([]byte(line), "p")
		h, ok := parseListedHeader([]byte(line))
		if !ok {
			return
		}
		raw, err := h.MarshalJSON()
		require.NoError(t, err)
		back, ok := parseListedHeader(raw)
		require.True(t, ok, "%s", raw)
		require.Equal(t, h, back)
	})
}

// cuts returns every offset of a short body, else 64 spread-out offsets.
func cuts(n int) []int {
	step := max(1, n/64)
	var out []int
	for cut := 0; cut < n; cut += step {
		out = append(out, cut)
	}
	return append(out, n)
}

func TestEscapedTypeNamesAreNotConfused(t *testing.T) {
	body := lines(`{"type":"a\\u0062","seq":0,"time":1,"data":0}`, `{"type":"a\u0062","seq":1,"time":1,"data":0}`)
	sc, err := scanLog([]byte(fuzzHeader+body), "p")
	require.NoError(t, err)
	require.Equal(t, []string{`a\u0062`, "ab"}, types(sc.events))
}

// FuzzZstdFrames checks the Zstandard reader on arbitrary bytes and on
// damaged valid logs: it never panics; the frames it finds are contiguous
// from byte 0 with at most a torn one after them; any prefix of a log that
// reads cleanly reads as a prefix of its events, cut at a frame boundary.
func FuzzZstdFrames(f *testing.F) {
	valid := zstdFile(fuzzHeader, lines(openTurnLines[:2]...), lines(openTurnLines[2:]...))
	f.Add(valid, 0, byte(0))
	f.Add(valid, 40, byte(1))
	f.Add(valid[:len(valid)-2], 7, byte(0x80))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x04}, 0, byte(0))
	f.Fuzz(func(t *testing.T, file []byte, at int, flip byte) {
		if len(file) > 0 {
			file = bytes.Clone(file)
			file[uint(at)%uint(len(file))] ^= flip
		}
		scan, err := scanFrames(file, 0, "p")
		if err == nil {
			next := 0
			for _, r := range scan.frames {
				require.Equal(t, next, r.start)
				require.Greater(t, r.end, r.start)
				next = r.end
			}
			require.True(t, scan.torn == -1 || scan.torn == next)
			if scan.torn >= 0 {
				_ = appendTornPrefix(nil, file, scan.torn)
			}
		}
		whole, wholeErr := scanZstdLog(file, "p")
		if wholeErr != nil {
			return
		}
		require.LessOrEqual(t, whole.cut, len(file))
		for _, cut := range cuts(len(file)) {
			part, err := scanZstdLog(file[:cut], "p")
			if err != nil {
				continue // a cut inside the header frame leaves no log
			}
			require.LessOrEqual(t, len(part.events), len(whole.events))
			require.Equal(t, whole.events[:len(part.events)], part.events, "cut %d", cut)
		}
	})
}

// envelopeKeys are the keys an event line may have.
var envelopeKeys = map[string]bool{"type": true, "seq": true, "time": true, "data": true,
	"sourceEventSeqs": true, "surfaceOp": true, "ignorable": true}

// FuzzEventLine checks the one-line event reader against encoding/json:
// it never panics; it accepts only objects whose keys are among the seven
// of an event envelope, with a string type, data, a safe-integer time and
// an ignorable that is true when present; the
// log scanner's decoder flags exactly the envelopes it refuses; and an
// accepted event writes a line of those keys only that reads back equal.
func FuzzEventLine(f *testing.F) {
	f.Add(`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`)
	f.Add(`{"type":"user/message","seq":3,"time":-1,"data":null,"sourceEventSeqs":[1,2],"surfaceOp":"append","ignorable":true}`)
	f.Add(`{"type":"a","seq":0,"time":1,"data":{},"extra":1}`)
	f.Add(`{"type":"a","seq":0,"time":1,"data":{},"ignorable":false}`)
	f.Add(`{"type":"a","seq":0,"time":1,"data":{},"type":"b"}`)
	f.Add(`{"type":7,"seq":0,"time":1,"data":{}}`)
	f.Add(`{"type":"a","seq":0,"time":1}`)
	f.Add(`{"type":"a","seq":0,"time":1.5,"data":{}}`)
	f.Add(`{"type":"a","seq":0,"time":"1","data":{}}`)
	f.Add(`{"type":"a","seq":"0","time":1,"data":{}}`)
	f.Add(`{"type":null,"seq":0,"time":null,"data":{}}`)
	f.Add(`{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[0,1],"texts":["a","b","c"]}}`)
	f.Fuzz(func(t *testing.T, line string) {
		var e Event
		err := e.UnmarshalJSON([]byte(line))
		decoded, decodeErr := decodeRecord([]byte(line), nil, nil)
		var members map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &members) != nil || members == nil {
			require.Error(t, err, "not a JSON object")
			return
		}
		foreign := false
		for k := range members {
			foreign = foreign || !envelopeKeys[k]
		}
		if ignorable, ok := members["ignorable"]; ok && string(ignorable) != "true" {
			foreign = true
		}
		if foreign || refusedAtValidation(members) {
			require.Error(t, err, "an envelope the original refuses")
			if decodeErr == nil {
				require.NotEqual(t, 1, len(decoded), "only a packed row, never one event, may decode cleanly")
				require.True(t, rowTags[string(bytes.Trim(members["type"], `"`))], "a packed row")
			}
			return
		}
		if err != nil {
			return
		}
		require.NoError(t, decodeErr, "the scanner's decoder agrees")
		require.Equal(t, []Event{e}, decoded)
		written, err := e.MarshalJSON()
		if err != nil {
			return // data or surfaceOp not compact: refused on write
		}
		var writtenKeys map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(written, &writtenKeys), "%s", written)
		for k := range writtenKeys {
			require.True(t, envelopeKeys[k], "written key %q", k)
		}
		var back Event
		require.NoError(t, back.UnmarshalJSON(written), "%s", written)
		require.Equal(t, e.Type, back.Type)
		require.Equal(t, e.Seq, back.Seq)
		require.Equal(t, e.Ignorable, back.Ignorable)
	})
}

// refusedAtValidation reports whether an event envelope's members are
// what the original refuses when it validates a stored log, keys aside: a
// type that is not a string, no data, a time that is not a safe integer.
func refusedAtValidation(members map[string]json.RawMessage) bool {
	var typ string
	var time float64
	_, hasData := members["data"]
	isNull := func(key string) bool { return string(bytes.TrimSpace(members[key])) == "null" }
	return isNull("type") || json.Unmarshal(members["type"], &typ) != nil || !hasData ||
		isNull("time") || json.Unmarshal(members["time"], &time) != nil || time != math.Trunc(time) || math.Abs(time) > 1<<53-1
}

// FuzzReadLog checks the reader of a log kept as lines (the Postgres
// store's): it never panics, and what it reads is what the JSONL scanner
// reads of the same lines as a file with its checks, contiguous from seq 0.
func FuzzReadLog(f *testing.F) {
	f.Add(strings.Join(openTurnLines, "\n"))
	f.Add(`{"type":"a","seq":0,"time":1,"data":{},"extra":1}`)
	f.Add(`{"type":"user/message","seq":0,"time":1,"data":{"content":[],"source":{"kind":"user"}},"surfaceOp":"append"}`)
	f.Add(`{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[0,1],"texts":["a","b","c"]}}`)
	f.Fuzz(func(t *testing.T, body string) {
		lines := strings.Split(body, "\n")
		log, err := ReadLog("f", "p", strings.TrimSuffix(fuzzHeader, "\n"), lines)
		if err != nil {
			return
		}
		for i, e := range log.Events {
			require.Equal(t, int64(i), e.Seq)
		}
		sc, err := scanLog([]byte(fuzzHeader+body+"\n"), "p")
		require.NoError(t, err, "the scanner reads the lines too")
		require.NoError(t, checkEvents("f", sc, "p"), "with the same checks")
		require.Equal(t, log.Events, sc.events)
	})
}
