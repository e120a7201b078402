package session

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An event envelope holds type, seq, time, data and, optionally,
// sourceEventSeqs, surfaceOp and ignorable (only ever true). The original
// refuses a stored log holding any other envelope, wherever in the kept
// log that event is (the last complete line included): it is a validation
// failure, not damage a scan tolerates, worded "stored session "<id>"
// failed validation: seed event at index <i> has an invalid event
// envelope". Every read refuses it, the repairing one included, and check
// reports it; nothing is written. Such a line in a torn tail (unterminated,
// or after a defect past the last turn/end) is cut with the tail.
func TestAnEventEnvelopeWithAForeignKeyIsRefused(t *testing.T) {
	ctx := context.Background()
	const (
		start = `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`
		end   = `{"type":"turn/end","seq":2,"time":2,"data":{"turn":1,"reason":{"kind":"completed"}}}`
	)
	for _, tc := range []struct {
		name  string
		body  string
		index int // -1: the log reads
		kept  int // events read when it reads
	}{
		{"foreign key in the middle", lines(start, `{"type":"step/start","seq":1,"time":1,"data":{"turn":1,"step":1},"extra":1}`, end), 1, 0},
		{"foreign key on the last line", lines(start, `{"type":"step/start","seq":1,"time":1,"data":{"turn":1,"step":1}}`,
			`{"type":"turn/end","seq":2,"time":2,"data":{"turn":1,"reason":{"kind":"completed"}},"note":"x"}`), 2, 0},
		{"a packed row's key on an event", lines(`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1},"seq0":0}`), 0, 0},
		{"ignorable false", lines(start, `{"type":"step/start","seq":1,"time":1,"data":{"turn":1,"step":1},"ignorable":false}`, end), 1, 0},
		{"ignorable not a boolean", lines(start, `{"type":"step/start","seq":1,"time":1,"data":{"turn":1,"step":1},"ignorable":1}`, end), 1, 0},
		{"type not a string, ignorable", lines(start, `{"type":7,"seq":1,"time":1,"data":{},"ignorable":true}`, end), 1, 0},
		{"data missing", lines(start, `{"type":"step/start","seq":1,"time":1}`, end), 1, 0},
		{"data missing on the last line of an open turn", lines(start, `{"type":"step/start","seq":1,"time":1}`), 1, 0},
		{"time missing", lines(start, `{"type":"step/start","seq":1,"data":{"turn":1,"step":1}}`, end), 1, 0},
		{"time a string", lines(start, `{"type":"step/start","seq":1,"time":"1","data":{"turn":1,"step":1}}`, end), 1, 0},
		{"time fractional", lines(start, `{"type":"step/start","seq":1,"time":1.5,"data":{"turn":1,"step":1}}`), 1, 0},
		{"time past a safe integer", lines(start, `{"type":"step/start","seq":1,"time":9007199254740992,"data":{"turn":1,"step":1}}`), 1, 0},
		{"integral time written as a float", lines(start, `{"type":"step/start","seq":1,"time":1e3,"data":{"turn":1,"step":1}}`), -1, 2},
		{"data null", lines(start, `{"type":"step/start","seq":1,"time":1,"data":null}`), -1, 2},
		{"a torn last line", lines(start) + `{"type":"step/start","seq":1,"time":1,"data":{},"extra":1}`, -1, 1},
		{"a torn last line without data", lines(start) + `{"type":"step/start","seq":1,"time":1}`, -1, 1},
		{"after damage past the last turn/end", lines(start, "garbage", `{"type":"step/start","seq":1,"time":1,"data":{},"extra":1}`), -1, 1},
		{"the seven keys", lines(start, `{"type":"user/message","seq":1,"time":1,"data":{"id":"m","role":"user","source":{"kind":"user"},"content":[]},`+
			`"sourceEventSeqs":[0],"surfaceOp":"append"}`, `{"type":"x/y","seq":2,"time":1,"data":null,"ignorable":true}`), -1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			h := header("env")
			content := headerLineOf(t, h) + tc.body
			path := writeRaw(t, s, h, content)
			damage, err := s.check(ctx)
			require.NoError(t, err)
			if tc.index < 0 {
				log, err := s.Inspect(ctx, "env")
				require.NoError(t, err)
				require.Len(t, log.Events, tc.kept)
				for _, d := range damage {
					require.NotContains(t, d.Msg, "envelope")
				}
				return
			}
			want := `stored session "env" failed validation: seed event at index ` + string(rune('0'+tc.index)) +
				" has an invalid event envelope (raw log: " + path + ")"
			for _, read := range []func(context.Context, string) (*Log, error){s.Inspect, s.Load} {
				_, err := read(ctx, "env")
				require.ErrorIs(t, err, ErrCorrupt)
				require.EqualError(t, err, want)
				readable, _, ok := ReadablePrefix(err)
				require.True(t, ok)
				require.Len(t, readable, tc.index, "the events before it are readable")
			}
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, content, string(after), "a refused load writes nothing")
			require.Len(t, damage, 1, "check reports the log")
			require.Equal(t, damagedLog, damage[0].Kind)
			require.Equal(t, want, damage[0].Msg)
		})
	}
}

// Event.UnmarshalJSON, the one-line reader, refuses the same envelopes.
func TestEventUnmarshalRefusesAForeignEnvelope(t *testing.T) {
	for _, line := range []string{
		`{"type":"a","seq":0,"time":1,"data":{},"extra":1}`,
		`{"type":"a","seq":0,"time":1,"data":{},"ignorable":false}`,
		`{"type":"a","seq":0,"time":1,"data":{},"time0":1}`,
	} {
		var e Event
		require.EqualError(t, e.UnmarshalJSON([]byte(line)), "corrupt session log: invalid session event: invalid event envelope", line)
	}
	var e Event
	require.NoError(t, e.UnmarshalJSON([]byte(`{"type":"a","seq":0,"time":1,"data":{},"ignorable":true}`)))
	require.True(t, e.Ignorable)
}

// A type that is not a string is not one this build knows: unless the
// event is marked ignorable (then its envelope is refused), the read
// refuses the log as the original does an unknown type, naming the type
// as JavaScript prints it. A seq that is not the next integer is a seq gap
// at scan level, as in the original, whatever its JSON type.
func TestAnEventTypeOrSeqOfTheWrongKind(t *testing.T) {
	ctx := context.Background()
	const start = `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`
	const end = `{"type":"turn/end","seq":2,"time":2,"data":{"turn":1,"reason":{"kind":"completed"}}}`
	for _, tc := range []struct{ name, line, want string }{
		{"type a number", `{"type":7,"seq":1,"time":1,"data":{}}`,
			`session "env" contains event type "7" (seq 1) unknown to this harness and not marked ignorable; ` +
				"refusing to interpret the log — it was likely written by a newer harness (raw log: PATH)"},
		{"type missing", `{"seq":1,"time":1,"data":{}}`,
			`session "env" contains event type "undefined" (seq 1) unknown to this harness and not marked ignorable; ` +
				"refusing to interpret the log — it was likely written by a newer harness (raw log: PATH)"},
		{"seq a string", `{"type":"step/start","seq":"1","time":1,"data":{}}`,
			"corrupt session log: seq gap in committed region at line 2 (expected 1, got 1) (raw log: PATH)"},
		{"seq fractional", `{"type":"step/start","seq":1.5,"time":1,"data":{}}`,
			"corrupt session log: seq gap in committed region at line 2 (expected 1, got 1.5) (raw log: PATH)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			h := header("env")
			content := headerLineOf(t, h) + lines(start, tc.line, end)
			path := writeRaw(t, s, h, content)
			for _, read := range []func(context.Context, string) (*Log, error){s.Inspect, s.Load} {
				_, err := read(ctx, "env")
				require.EqualError(t, err, strings.ReplaceAll(tc.want, "PATH", path))
			}
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, content, string(after), "a refused load writes nothing")
		})
	}
}
