package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// writeRaw stores content as the log of h under the store's root, exactly
// where the header's id and cwd place it.
func writeRaw(t *testing.T, s *JSONL, h Header, content string) string {
	t.Helper()
	path := logPathOf(t, s, h)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func headerLineOf(t *testing.T, h Header) string {
	t.Helper()
	raw, err := h.MarshalJSON()
	require.NoError(t, err)
	return string(raw) + "\n"
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// openTurnLines is a log body whose final turn is open: a completed turn 1,
// then turn 2 with a step, an assistant message requesting two tool calls,
// and a recorded tool/call for the second one.
var openTurnLines = []string{
	`{"type":"turn/start","seq":0,"time":100,"data":{"turn":1}}`,
	`{"type":"turn/end","seq":1,"time":101,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
	`{"type":"turn/start","seq":2,"time":102,"data":{"turn":2}}`,
	`{"type":"step/start","seq":3,"time":103,"data":{"turn":2,"step":1}}`,
	`{"type":"assistant/message","seq":4,"time":104,"data":{"turn":2,"step":1,"message":{"role":"assistant",` +
		`"content":[{"type":"tool-call","id":"call_a","name":"read","arguments":"{}"},` +
		`{"type":"tool-call","id":"call_b","name":"write","arguments":"{}"}],` +
		`"source":{"kind":"model","provider":"p","model":"m"},"id":"msg"}},"surfaceOp":"append"}`,
	`{"type":"tool/call","seq":5,"time":105,"data":{"turn":2,"step":1,"callId":"call_b","name":"write","arguments":"{}"}}`,
}

// The closers the original writes for openTurnLines, byte for byte.
var openTurnClosers = []string{
	`{"type":"tool/result","seq":6,"time":105,"data":{"turn":2,"step":1,"message":{"id":"interrupted-tool-result-call_a-6",` +
		`"role":"user","source":{"kind":"tool","callId":"call_a"},"content":[{"type":"tool-result","toolCallId":"call_a",` +
		`"isError":true,"content":[{"type":"text","text":"` + toolNotStartedText + `"}]}]},` +
		`"error":{"name":"ToolNotStartedError","code":"TOOL_NOT_STARTED"}},"surfaceOp":"append"}`,
	`{"type":"tool/result","seq":7,"time":105,"data":{"turn":2,"step":1,"message":{"id":"interrupted-tool-result-call_b-7",` +
		`"role":"user","source":{"kind":"tool","callId":"call_b"},"content":[{"type":"tool-result","toolCallId":"call_b",` +
		`"isError":true,"content":[{"type":"text","text":"` + toolOutcomeUnknownText + `"}]}]},` +
		`"error":{"name":"ToolOutcomeUnknownError","code":"TOOL_OUTCOME_UNKNOWN"}},"surfaceOp":"append","sourceEventSeqs":[5]}`,
	`{"type":"step/end","seq":8,"time":105,"data":{"turn":2,"step":1}}`,
	`{"type":"turn/end","seq":9,"time":105,"data":{"turn":2,"reason":{"kind":"interrupted"}}}`,
}

func TestLoadClosesInterruptedTurnByteForByte(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	h := header("open")
	committed := headerLineOf(t, h) + lines(openTurnLines...)
	path := writeRaw(t, s, h, committed)

	inspected, err := s.Inspect(ctx, "open")
	require.NoError(t, err)
	require.Len(t, inspected.Events, 6, "inspect adds no closers")

	log, err := s.Load(ctx, "open")
	require.NoError(t, err)
	require.Len(t, log.Events, 10)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, committed+lines(openTurnClosers...), string(raw))

	require.NoError(t, s.Append(ctx, "open", []Event{ev(10, "turn/start", `{"turn":3}`)}))
	again, err := s.Load(ctx, "open")
	require.NoError(t, err)
	require.Len(t, again.Events, 12, "a reload closes turn 3 in turn")
}

func TestLoadOfBalancedLogWritesNothing(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	h := header("balanced")
	path := writeRaw(t, s, h, headerLineOf(t, h)+lines(openTurnLines[:2]...))
	before := statFile(t, path)
	log, err := s.Load(ctx, "balanced")
	require.NoError(t, err)
	require.Len(t, log.Events, 2)
	require.Equal(t, before, statFile(t, path))
}

// fileState is what must not change when nothing writes a file.
type fileState struct {
	content string
	mtime   time.Time
}

func statFile(t *testing.T, path string) fileState {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	info, err := os.Stat(path)
	require.NoError(t, err)
	return fileState{content: string(raw), mtime: info.ModTime()}
}

// TestTornTailAtEveryOffset cuts the last line at every byte offset: Inspect
// returns the prefix and leaves the file alone, Load truncates the fragment
// and closes the open turn, and the file then ends on a complete line.
func TestTornTailAtEveryOffset(t *testing.T) {
	ctx := context.Background()
	h := header("torn")
	prefix := headerLineOf(t, h) + lines(openTurnLines[:len(openTurnLines)-1]...)
	last := openTurnLines[len(openTurnLines)-1] + "\n"
	for cut := 0; cut <= len(last); cut++ {
		s := openStore(t)
		path := writeRaw(t, s, h, prefix+last[:cut])
		complete := cut == len(last)
		want := len(openTurnLines) - 1
		if complete {
			want++
		}

		before := statFile(t, path)
		log, err := s.Inspect(ctx, "torn")
		require.NoError(t, err, "cut %d", cut)
		require.Len(t, log.Events, want, "cut %d", cut)
		require.Equal(t, before, statFile(t, path), "inspect never writes (cut %d)", cut)

		loaded, err := s.Load(ctx, "torn")
		require.NoError(t, err, "cut %d", cut)
		require.Equal(t, log.Events, loaded.Events[:want], "cut %d", cut)
		after := statFile(t, path).content
		require.True(t, strings.HasPrefix(after, prefix), "committed bytes are never rewritten (cut %d)", cut)
		require.True(t, strings.HasSuffix(after, `{"kind":"interrupted"}}}`+"\n"), "cut %d", cut)
		again, err := s.Inspect(ctx, "torn")
		require.NoError(t, err)
		require.Equal(t, loaded.Events, again.Events, "cut %d", cut)
	}
}

func TestTornTailGarbageAfterLastTurnEnd(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	h := header("garbage")
	committed := headerLineOf(t, h) + lines(openTurnLines[:2]...)
	path := writeRaw(t, s, h, committed+lines(`{"type":"x","seq":2,`, `{"type":"feedback/record","seq":3,"time":1,"data":{}}`))
	log, err := s.Inspect(ctx, "garbage")
	require.NoError(t, err)
	require.Len(t, log.Events, 2, "lines after the first defect are dropped, even valid ones")
	_, err = s.Load(ctx, "garbage")
	require.NoError(t, err)
	require.Equal(t, committed, statFile(t, path).content, "load truncates the tail; the turn was closed")
}

// TestCommittedRegionDamage: damage in the committed region refuses the
// read naming the file and the line; ReadablePrefix still gives the events
// before that line.
func TestCommittedRegionDamage(t *testing.T) {
	h := header("dmg")
	turnEnd := `{"type":"turn/end","seq":2,"time":3,"data":{"turn":1,"reason":{"kind":"completed"}}}`
	cases := []struct {
		name, body string
		line       int
		msg        string
	}{
		{"garbage before turn/end", lines(openTurnLines[0], `not json`, turnEnd), 2,
			"corrupt session log: unparsable committed event at line 2"},
		{"empty line before turn/end", lines(openTurnLines[0], ``, turnEnd), 2,
			"corrupt session log: unparsable committed event at line 2"},
		{"seq gap before turn/end", lines(openTurnLines[0], `{"type":"feedback/record","seq":5,"time":1,"data":{}}`, turnEnd), 2,
			"corrupt session log: seq gap in committed region at line 2 (expected 1, got 5)"},
		{"turn/end with a seq gap", lines(openTurnLines[0], turnEnd), 2,
			"corrupt session log: seq gap in committed region at line 2 (expected 1, got 2)"},
		{"malformed packed row before turn/end", lines(openTurnLines[0],
			`{"type":"text-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[0],"texts":["a"]}}`,
			turnEnd), 2, "corrupt session log: unparsable committed event at line 2"},
		{"missing seq before turn/end", lines(openTurnLines[0], `{"type":"feedback/record","time":1,"data":{}}`, turnEnd), 2,
			"corrupt session log: seq gap in committed region at line 2 (expected 1, got undefined)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t)
			path := writeRaw(t, s, h, headerLineOf(t, h)+c.body)
			before := statFile(t, path)
			for _, read := range []func(context.Context, string) (*Log, error){s.Inspect, s.Load} {
				_, err := read(context.Background(), "dmg")
				var corrupt *corruptError
				require.True(t, errors.As(err, &corrupt), "%v", err)
				require.ErrorIs(t, err, ErrCorrupt)
				require.Equal(t, path, corrupt.Path)
				require.Equal(t, c.line, corrupt.Line)
				require.Equal(t, c.msg+" (raw log: "+path+")", err.Error())
				readable, line, ok := ReadablePrefix(err)
				require.True(t, ok, "the events before the damage are readable")
				require.Equal(t, c.line, line)
				require.Len(t, readable, 1, "the turn/start before the damaged line")
				require.Equal(t, "turn/start", readable[0].Type)
			}
			require.Equal(t, before, statFile(t, path), "a damaged log is never repaired")
		})
	}
}

func TestPackedRowsExpand(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	h := header("packed")
	writeRaw(t, s, h, headerLineOf(t, h)+lines(
		`{"type":"turn/start","seq":0,"time":1786357520283,"data":{"turn":1}}`,
		`{"type":"text-chunks","seq0":1,"time0":1783352121777,"data":{"turn":1,"step":1,"index":1,"dt":[0,5],"texts":["CH","ILD","_OK"]}}`,
		`{"type":"reasoning-chunks","seq0":4,"time0":10,"data":{"turn":1,"step":1,"index":0,"dt":[-1],"texts":["a","b"]}}`,
		`{"type":"tool-call-chunks","seq0":6,"time0":20,"data":{"turn":1,"step":1,"index":2,"dt":[1],"id":"c1","name":"read","args":["{\"p","\":1}"]}}`,
		`{"type":"tool-call-chunks","seq0":8,"time0":30,"data":{"turn":1,"step":1,"index":2,"dt":[],"id":"c1","args":["x"]}}`,
	))
	log, err := s.Inspect(ctx, "packed")
	require.NoError(t, err)
	got := make([]string, 0, len(log.Events))
	for _, e := range log.Events {
		raw, err := e.MarshalJSON()
		require.NoError(t, err)
		got = append(got, string(raw))
	}
	require.Equal(t, []string{
		`{"type":"turn/start","seq":0,"time":1786357520283,"data":{"turn":1}}`,
		`{"type":"assistant/chunk","seq":1,"time":1783352121777,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":1,"text":"CH"}}}`,
		`{"type":"assistant/chunk","seq":2,"time":1783352121777,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":1,"text":"ILD"}}}`,
		`{"type":"assistant/chunk","seq":3,"time":1783352121782,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":1,"text":"_OK"}}}`,
		`{"type":"assistant/chunk","seq":4,"time":10,"data":{"turn":1,"step":1,"chunk":{"type":"reasoning-delta","index":0,"text":"a"}}}`,
		`{"type":"assistant/chunk","seq":5,"time":9,"data":{"turn":1,"step":1,"chunk":{"type":"reasoning-delta","index":0,"text":"b"}}}`,
		`{"type":"assistant/chunk","seq":6,"time":20,"data":{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":2,"id":"c1","name":"read","argumentsDelta":"{\"p"}}}`,
		`{"type":"assistant/chunk","seq":7,"time":21,"data":{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":2,"id":"c1","name":"read","argumentsDelta":"\":1}"}}}`,
		`{"type":"assistant/chunk","seq":8,"time":30,"data":{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":2,"id":"c1","argumentsDelta":"x"}}}`,
	}, got)
}

func TestHeaderRefusals(t *testing.T) {
	cases := []struct {
		name, line  string
		unsupported bool
		msg         string
	}{
		{"newer version", `{"type":"session","version":99,"id":"hdr","createdAt":1}`, true,
			`session "hdr" uses log format v99, but this harness reads only v0: the log was written by a newer harness — upgrade the harness to open it`},
		{"older version", `{"type":"session","version":-1,"id":"hdr","createdAt":1,"delegationDepth":0}`, true,
			`session "hdr" uses log format v-1, older than the supported v0, and this build ships no upgrade path for it`},
		{"numeric id", `{"type":"session","version":42,"id":123}`, true,
			`session "123" uses log format v42, but this harness reads only v0: the log was written by a newer harness — upgrade the harness to open it`},
		{"not an object", `42`, false, "corrupt session log: first line is not a session header"},
		{"not JSON", `{"type":"session",`, false, "corrupt session log: header line is not valid JSON"},
		{"missing delegationDepth", `{"type":"session","version":0,"id":"hdr","createdAt":1}`, false,
			"corrupt session log: first line is not a session header"},
		{"negative zero createdAt", `{"type":"session","version":0,"id":"hdr","createdAt":-0,"delegationDepth":0}`, false,
			"corrupt session log: first line is not a session header"},
		{"fractional depth", `{"type":"session","version":0,"id":"hdr","createdAt":1,"delegationDepth":1.5}`, false,
			"corrupt session log: first line is not a session header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t)
			path := writeRaw(t, s, Header{ID: "hdr"}, c.line+"\n")
			_, err := s.Inspect(context.Background(), "hdr")
			require.Error(t, err)
			require.Equal(t, c.msg+" (raw log: "+path+")", err.Error())
			if c.unsupported {
				require.ErrorIs(t, err, errUnsupported)
			} else {
				require.ErrorIs(t, err, ErrCorrupt)
			}
		})
	}
}

// The original harness checks a stored header's cwd only when it
// builds a Session from the log (the repairing load of a cold resume), not
// when it inspects the log: a relative cwd, such as the "{{cwd}}" the
// original's snapshot logs carry, is read by Inspect and listed, while Load
// refuses it before repairing anything.
func TestARelativeCwdIsInspectedButNotLoaded(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	h := Header{ID: "rel", CreatedAt: 1, Cwd: "{{cwd}}"}
	content := `{"type":"session","version":0,"id":"rel","createdAt":1,"cwd":"{{cwd}}","delegationDepth":0}` + "\n" +
		lines(openTurnLines...)
	path := writeRaw(t, s, h, content)

	listed, err := s.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []Header{h}, listed)
	log, err := s.Inspect(ctx, "rel")
	require.NoError(t, err)
	require.Equal(t, h, log.Header)
	require.Len(t, log.Events, len(openTurnLines))

	_, err = s.Load(ctx, "rel")
	require.ErrorIs(t, err, ErrCorrupt)
	require.EqualError(t, err, `stored session "rel" failed validation: header cwd "{{cwd}}" is not an absolute path`+
		" (raw log: "+path+")")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, content, string(after), "a refused load repairs nothing")
}

// The original builds a Session from a log it loads to resume, and the
// Session replays every event through the surface rules: a user message
// with no surfaceOp, which the catalog lists as corrupt, can be inspected
// but not resumed. Load refuses it in the original's words before it
// repairs anything (here an interrupted last turn would get closers).
func TestABrokenSurfaceIsInspectedButNotLoaded(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	h := Header{ID: "surf", CreatedAt: 1}
	content := `{"type":"session","version":0,"id":"surf","createdAt":1,"delegationDepth":0}` + "\n" + lines(
		`{"type":"turn/start","seq":0,"time":100,"data":{"turn":1}}`,
		`{"type":"user/message","seq":1,"time":100,"data":{"content":[],"source":{"kind":"user"},"role":"user","id":"m"}}`,
	)
	path := writeRaw(t, s, h, content)

	log, err := s.Inspect(ctx, "surf")
	require.NoError(t, err)
	require.Len(t, log.Events, 2)

	_, err = s.Load(ctx, "surf")
	require.ErrorIs(t, err, ErrCorrupt)
	require.EqualError(t, err, `stored session "surf" failed validation: invalid seed event at index 1: `+
		`session event "user/message" is surface-eligible and requires a surfaceOp marker (raw log: `+path+")")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, content, string(after), "a refused load repairs nothing")
}

func TestLegacyVocabularyRefused(t *testing.T) {
	cases := map[string]string{
		`{"type":"request/header-delta","seq":0,"time":1,"data":{}}`:              `session "leg" contains unsupported legacy request/header-delta event at seq 0`,
		`{"type":"mode/set","seq":0,"time":1,"data":{}}`:                          `session "leg" contains unsupported legacy mode/set event at seq 0`,
		`{"type":"request/header","seq":0,"time":1,"data":{"reason":"fallback"}}`: `session "leg" contains unsupported legacy request/header reason "fallback" at seq 0`,
	}
	for line, msg := range cases {
		s := openStore(t)
		h := header("leg")
		path := writeRaw(t, s, h, headerLineOf(t, h)+lines(line))
		for _, read := range []func(context.Context, string) (*Log, error){s.Inspect, s.Load} {
			_, err := read(context.Background(), "leg")
			require.ErrorIs(t, err, ErrCorrupt)
			require.EqualError(t, err, msg+" (raw log: "+path+")")
		}
	}
	s := openStore(t)
	h := header("ok")
	writeRaw(t, s, h, headerLineOf(t, h)+lines(`{"type":"request/header","seq":0,"time":1,"data":{"reason":"initial"}}`))
	_, err := s.Inspect(context.Background(), "ok")
	require.NoError(t, err)
}

func TestLegacyVocabularyRefusedOnAppend(t *testing.T) {
	s := openStore(t)
	require.NoError(t, s.Create(context.Background(), header("w"), nil))
	err := s.Append(context.Background(), "w", []Event{ev(0, "mode/set", `{}`)})
	require.ErrorIs(t, err, ErrInvalid)
	require.EqualError(t, err, `session "w" contains unsupported legacy mode/set event at seq 0`)
}

// An event type outside the known vocabulary and not marked ignorable
// makes every read refuse the log as written by a newer harness (and
// check report it), so a resume never appends to a log it cannot
// interpret; one marked ignorable is kept.
func TestUnknownEventTypeRefusedUnlessIgnorable(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	h := header("new")
	content := headerLineOf(t, h) + lines(`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`,
		`{"type":"turn/end","seq":1,"time":2,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
		`{"type":"future/thing","seq":2,"time":3,"data":{"x":1}}`)
	path := writeRaw(t, s, h, content)
	want := `session "new" contains event type "future/thing" (seq 2) unknown to this harness and not marked ignorable; ` +
		"refusing to interpret the log — it was likely written by a newer harness (raw log: " + path + ")"
	for _, read := range []func(context.Context, string) (*Log, error){s.Inspect, s.Load} {
		_, err := read(ctx, "new")
		require.ErrorIs(t, err, errUnsupported)
		require.EqualError(t, err, want)
	}
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, content, string(after), "a refused load writes nothing")
	damage, err := s.check(ctx)
	require.NoError(t, err)
	require.Len(t, damage, 1, "check reports the log it cannot interpret")
	require.Equal(t, damagedLog, damage[0].Kind)
	require.Equal(t, want, damage[0].Msg)

	s = openStore(t)
	writeRaw(t, s, h, headerLineOf(t, h)+lines(`{"type":"future/thing","seq":0,"time":3,"data":{"x":1},"ignorable":true}`))
	log, err := s.Inspect(ctx, "new")
	require.NoError(t, err)
	require.Equal(t, "future/thing", log.Events[0].Type, "an ignorable unknown event is kept")
}

// The closers a repairing read appends are of known types, so the
// repaired log reads again.
func TestRepairClosersAreOfKnownTypes(t *testing.T) {
	sc, err := scanLog([]byte(fuzzHeader+lines(openTurnLines...)), "p")
	require.NoError(t, err)
	closers, _, err := LoadRepair(&Log{Header: sc.header, Events: sc.events}, "p")
	require.NoError(t, err)
	require.Len(t, closers, 4, "a tool/result per pending call, step/end, turn/end")
	for _, e := range closers {
		require.True(t, vocab.Known(e.Type), e.Type)
	}
}

// A committed line that is valid JSON but not an object (a number, a
// string, an array, a boolean, null) is damage no crash leaves, since
// every record begins with "{". Wherever it stands, even in an unfinished
// last turn with no turn/end after it, the read refuses the log naming the
// line and what it is, ReadablePrefix gives the events before it, and a
// load cuts nothing: the lines after it stay. (The original's scanner
// takes it for a seq gap, "got undefined", or throws on null, and cuts an
// unfinished last turn away from it.) The same holds in a Zstandard log's
// frames and in lines kept elsewhere (ReadLog).
func TestACommittedLineThatIsNotAnObjectIsRefusedNotCut(t *testing.T) {
	ctx := context.Background()
	h := header("nonobj")
	after := `{"type":"feedback/record","seq":3,"time":1,"data":{}}`
	for _, c := range []struct{ line, kind string }{
		{`42`, "a number"}, {` -1.5e3 `, "a number"}, {`"x"`, "a string"}, {`[]`, "an array"},
		{`[{"type":"feedback/record","seq":2,"time":1,"data":{}}]`, "an array"},
		{`true`, "a boolean"}, {`false`, "a boolean"}, {`null`, "null"},
	} {
		t.Run(c.line, func(t *testing.T) {
			body := lines(openTurnLines[0], openTurnLines[1], c.line, after)
			want := "corrupt session log: committed event at line 3 is not a JSON object but " + c.kind
			s := openStore(t)
			path := writeRaw(t, s, h, headerLineOf(t, h)+body)
			before := statFile(t, path)
			for _, read := range []func(context.Context, string) (*Log, error){s.Inspect, s.Load} {
				_, err := read(ctx, "nonobj")
				require.ErrorIs(t, err, ErrCorrupt)
				require.EqualError(t, err, want+" (raw log: "+path+")")
				readable, line, ok := ReadablePrefix(err)
				require.True(t, ok)
				require.Equal(t, 3, line)
				require.Len(t, readable, 2, "the turn before the damaged line")
			}
			require.Equal(t, before, statFile(t, path), "nothing is cut")

			z := openZstdStore(t)
			zpath := writeZstd(t, z, h, zstdFile(headerLineOf(t, h), body))
			_, err := z.Load(ctx, "nonobj")
			require.ErrorIs(t, err, ErrCorrupt)
			require.ErrorContains(t, err, want)

			_, err = ReadLog("nonobj", "elsewhere", strings.TrimSuffix(headerLineOf(t, h), "\n"),
				[]string{openTurnLines[0], openTurnLines[1], c.line, after})
			require.EqualError(t, err, want+" (raw log: elsewhere)")
			require.FileExists(t, zpath)
		})
	}
}

// A header whose id, cwd or parentSession holds a lone surrogate escape
// is never read as the U+FFFD id a Go string would make of it: even in
// the folder that id names, a read refuses it as unsupported and List
// skips it, so it cannot pass for the session "lone\ufffd".
func TestALoneSurrogateHeaderIsNotReadAsAnother(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	lossy := Header{ID: "lone\ufffd", CreatedAt: 1, Cwd: "/work/project"}
	path := writeRaw(t, s, lossy, `{"type":"session","version":0,"id":"lone\ud800","createdAt":1,"cwd":"/work/project","delegationDepth":0}`+"\n")
	_, err := s.Inspect(ctx, lossy.ID)
	require.ErrorIs(t, err, errUnsupported)
	require.EqualError(t, err, `session header id "lone\ud800" holds a lone UTF-16 surrogate, which this build cannot represent; `+
		"the session is neither listed nor read (raw log: "+path+")")
	headers, err := s.List(ctx)
	require.NoError(t, err)
	require.Empty(t, headers)
}

func TestHasLoneSurrogate(t *testing.T) {
	for raw, lone := range map[string]bool{
		`"plain"`: false, `"\u00e9\n"`: false, `"\ud83d\ude00"`: false, `"a\\ud800"`: false, `"\\\ud83d\ude00"`: false,
		`"\ud800"`: true, `"a\uD800b"`: true, `"\ude00"`: true, `"\ud800\u0041"`: true, `"\ud800\ud800"`: true,
		`"\\\ud800"`: true, `"\ud83d\ude00\udc00"`: true,
	} {
		require.Equal(t, lone, hasLoneSurrogate([]byte(raw)), raw)
	}
}
