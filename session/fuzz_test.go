package session

import (
	"bytes"
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
