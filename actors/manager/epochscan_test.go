package manager

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

var epochScanSeeds = []string{
	`{"turn":1,"reason":{"kind":"completed"}}`,
	`{"turn":2,"trigger":{"kind":"message"}}`,
	`{"turn":2,"trigger":{"kind":"message","source":{"kind":"parent"}}}`,
	`{"turn":2,"trigger":{"kind":"message","source":{"kind":"Parent"}}}`,
	`{"turn":2,"trigger":{"kind":"message","source":{"kind":""}}}`,
	`{"turn":2,"trigger":{"kind":"message","source":{"kind":"user"}}} `,
	`{"turn":3}`,
	` { "turn" : -4 , "reason" : { "kind" : "error" , "message" : "a \" b" , "code" : "X" } } `,
	`{"reason":{"kind":"aborted","cause":{"kind":"parent"}},"turn":5}`,
	`{"turn":1,"turn":2}`,
	`{"Turn":7,"REASON":{"Kind":"refusal"}}`,
	`{"turn":1.5}`,
	`{"turn":"1"}`,
	`{"turn":null,"reason":null,"trigger":null}`,
	`{"turn":1,"reason":{"kind":"a\u0062c"}}`,
	`{"tu\u0072n":9}`,
	`{"turn":99999999999999999999}`,
	`{"turn":1,"reason":"completed"}`,
	`{"trigger":{"kind":7}}`,
	`{"x":[1,{"turn":2}],"turn":3,"y":"}"}`,
	`{"turn":1`,
	`[]`,
	`{}`,
	"{\"trigger\":{\"kind\":\"\x80\"}}",
	`{"turn":01,"reason":{"kind":"aborted"}}`,
	`{"turn":0,"reason":{"kind":""}}`,
	`{"turn":123456789012345678,"trigger":{"kind":"message"}}`,
	`{"turn":1234567890123456789,"trigger":{"kind":"message"}}`,
	`{"turn":4,"reason":{"kind":"max-tokens"}}}`,
	`{"turn":4,"reason":{"kind":"Aborted"}}`,
	`{"turn":3,"reason":{"kind":"error","step":1,"message":"snapshot disk full"}}`,
	`{"turn":4,"reason":{"kind":"error","step":2,"message":"slow down","code":"RATE_LIMIT"}}`,
	`{"turn":5,"reason":{"kind":"error","step":1,"failure":{"message":"denied","code":"AUTH"}}}`,
	`{"turn":6,"reason":{"kind":"error","error":{"message":"disk full","code":"UNKNOWN"}}}`,
}

// FuzzEpochScan: the byte-level reads agree with json.Unmarshal.
func FuzzEpochScan(f *testing.F) {
	for _, s := range epochScanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var wantEnd turnEnd
		endErr := json.Unmarshal(data, &wantEnd)
		gotEnd, ok := decodeTurnEnd(data, false)
		require.Equal(t, endErr == nil, ok)
		if ok {
			require.Equal(t, wantEnd, gotEnd)
		}
		valid := json.Valid(data)
		if valid { // a session's payloads skip the check
			gotEnd, ok := decodeTurnEnd(data, true)
			require.Equal(t, endErr == nil, ok)
			if ok {
				require.Equal(t, wantEnd, gotEnd)
			}
		}

		var wantStart turnStart
		startErr := json.Unmarshal(data, &wantStart)
		for _, trusted := range []bool{false, valid} {
			turn, trigger, ok := decodeTurnStart(data, trusted)
			require.Equal(t, startErr == nil, ok)
			if ok {
				require.Equal(t, wantStart.Turn, turn)
				require.Equal(t, wantStart.Trigger != nil, trigger.present)
				if trigger.present {
					require.Equal(t, wantStart.Trigger.Kind, trigger.kind)
				}
			}
		}
	})
}

// TestEpochScanCanonicalPath: the exact bytes the runtime writes for a
// turn's start and end are read without the general scanner; near misses
// are left to it.
func TestEpochScanCanonicalPath(t *testing.T) {
	turn, kind, ok := canonical([]byte(`{"turn":12,"reason":{"kind":"max-tokens"}}`), `,"reason":{"kind":"`, `"}}`)
	require.True(t, ok)
	require.Equal(t, int64(12), turn)
	require.Equal(t, "max-tokens", string(kind))
	turn, kind, ok = canonical([]byte(`{"turn":3,"trigger":{"kind":"message"}}`), `,"trigger":{"kind":"`, `"}}`)
	require.True(t, ok)
	require.Equal(t, int64(3), turn)
	require.Equal(t, "message", string(kind))
	turn, kind, ok = canonical([]byte(`{"turn":4,"trigger":{"kind":"message","source":{"kind":"parent"}}}`), `,"trigger":{"kind":"message","source":{"kind":"`, `"}}}`)
	require.True(t, ok)
	require.Equal(t, int64(4), turn)
	require.Equal(t, "parent", string(kind))
	for _, miss := range []string{
		`{"turn":01,"reason":{"kind":"aborted"}}`, `{"turn":,"reason":{"kind":"aborted"}}`,
		`{"turn":1,"reason":{"kind":""}}`, `{"turn":1,"reason":{"kind":"Aborted"}}`,
		`{"turn":1,"reason":{"kind":"aborted","cause":{}}}`, `{"turn":1234567890123456789,"reason":{"kind":"x"}}`,
		`{"turn":1,"reason":{"kind":"aborted"}} `, `{"turn":1,"trigger":{"kind":"message"}}`,
	} {
		_, _, ok := canonical([]byte(miss), `,"reason":{"kind":"`, `"}}`)
		require.False(t, ok, miss)
	}
}

// The canonical read of the runtime's own payloads allocates nothing.
func TestEpochScanCanonicalReadDoesNotAllocate(t *testing.T) {
	start := []byte(`{"turn":3,"trigger":{"kind":"message","source":{"kind":"parent"}}}`)
	legacyStart := []byte(`{"turn":3,"trigger":{"kind":"message"}}`)
	end := []byte(`{"turn":3,"reason":{"kind":"aborted"}}`)
	allocs := testing.AllocsPerRun(100, func() {
		_, trigger, _ := decodeTurnStart(start, true)
		_, legacy, _ := decodeTurnStart(legacyStart, true)
		got, _ := decodeTurnEnd(end, true)
		if trigger.kind != "message" || legacy.kind != "message" || got.Reason.Kind != "aborted" {
			panic("misread")
		}
	})
	require.Zero(t, allocs)
}

// TestEpochScanFastPath: the payloads the runtime writes take the fast path.
func TestEpochScanFastPath(t *testing.T) {
	var end turnEnd
	require.True(t, fastTurnEnd([]byte(`{"turn":12,"reason":{"kind":"aborted","cause":{"kind":"parent"}}}`), &end))
	require.Equal(t, int64(12), end.Turn)
	require.Equal(t, "aborted", end.Reason.Kind)
	turn, trigger, ok := fastTurnStart([]byte(`{"turn":3}`))
	require.True(t, ok)
	require.Equal(t, int64(3), turn)
	require.False(t, trigger.present)
	_, _, ok = fastTurnStart([]byte(`{"Turn":3}`))
	require.False(t, ok, "a case-folded key falls back to json.Unmarshal")
}

// TestEpochScanReadsRuntimeLogsCanonically: every turn/start and turn/end
// a settled child's log holds, as the runtime wrote them, is read by the
// canonical path, not the general scanner.
func TestEpochScanReadsRuntimeLogsCanonically(t *testing.T) {
	f := newFixture(t)
	p := f.startTopLevel("parent-canonical")
	child := f.start(p, "hello")
	f.settled(child, 1)
	starts, ends := 0, 0
	for _, e := range f.events(child) {
		switch e.Type {
		case "turn/start":
			_, _, ok := canonical(e.Data, `,"trigger":{"kind":"message","source":{"kind":"`, `"}}}`)
			require.True(t, ok, string(e.Data))
			starts++
		case "turn/end":
			_, _, ok := canonical(e.Data, `,"reason":{"kind":"`, `"}}`)
			require.True(t, ok, string(e.Data))
			ends++
		}
	}
	require.Equal(t, 1, starts)
	require.Equal(t, 1, ends)
}
