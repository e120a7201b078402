package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

func TestShowPrintsTheHeaderThenOneLinePerEvent(t *testing.T) {
	code, stdout, stderr := run(t, "show", "child-b", "--store", testStore(t))
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "session child-b createdAt=1970-01-01T00:00:00.003Z parent=parent cwd=/work depth=1\n"+
		"    0  turn/start            turn 1\n"+
		"    1  user/message          \"summarize the doc\"\n"+
		"    2  subagent/descriptor   provider=spawn label=\"write the summary\"\n"+
		"    3  turn/end              turn 1 completed\n", stdout)
}

// TestShowGivesAFailedTurnsMessage: an error turn/end shows its message
// and code in every shape a store holds: {step, message, code?} and {step,
// failure}, and {error:{message, code}}, which this runtime used to write.
func TestShowGivesAFailedTurnsMessage(t *testing.T) {
	root := t.TempDir()
	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	require.NoError(t, store.Create(context.Background(), session.Header{ID: "failing", CreatedAt: 1}, []session.Event{
		logEvent(0, "turn/end", `{"turn":3,"reason":{"kind":"error","step":1,"message":"snapshot disk full"}}`),
		logEvent(1, "turn/end", `{"turn":4,"reason":{"kind":"error","step":2,"message":"slow down","code":"RATE_LIMIT"}}`),
		logEvent(2, "turn/end", `{"turn":5,"reason":{"kind":"error","step":1,"failure":{"message":"simulated provider error (HTTP 401)","code":"AUTH"}}}`),
		logEvent(3, "turn/end", `{"turn":6,"reason":{"kind":"error","error":{"message":"disk full","code":"UNKNOWN"}}}`),
		logEvent(4, "turn/end", `{"turn":7,"reason":{"kind":"aborted"}}`),
	}))
	require.NoError(t, store.Close())
	code, stdout, stderr := run(t, "show", "--store", root, "failing")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "session failing createdAt=1970-01-01T00:00:00.001Z depth=0\n"+
		"    0  turn/end              turn 3 error: snapshot disk full\n"+
		"    1  turn/end              turn 4 error: slow down (RATE_LIMIT)\n"+
		"    2  turn/end              turn 5 error: simulated provider error (HTTP 401) (AUTH)\n"+
		"    3  turn/end              turn 6 error: disk full (UNKNOWN)\n"+
		"    4  turn/end              turn 7 aborted\n", stdout)
}

// TestShowPrintsAModelTurn: tool calls (in the assistant message and as
// tool/call) and tool results show what they hold.
func TestShowPrintsAModelTurn(t *testing.T) {
	root := t.TempDir()
	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	call := `{"type":"tool-call","id":"c1","name":"list_agents","arguments":"{}"}`
	message := logEvent(2, "assistant/message", `{"turn":1,"step":1,"message":{"role":"assistant","content":[`+call+`],`+
		`"source":{"kind":"model","provider":"p","model":"m"},"id":"a1"}}`)
	message.SurfaceOp, message.SourceEventSeqs = []byte(`"append"`), []int64{1}
	result := logEvent(4, "tool/result", `{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c1"},`+
		`"content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"no children"}],"isError":false}],"role":"user","id":"r1"}}`)
	result.SurfaceOp, result.SourceEventSeqs = []byte(`"append"`), []int64{3}
	require.NoError(t, store.Create(context.Background(), session.Header{ID: "model", CreatedAt: 1}, []session.Event{
		logEvent(0, "step/start", `{"turn":1,"step":1}`),
		logEvent(1, "assistant/chunk", `{"turn":1,"step":1,"chunk":{"type":"block-end","index":0,"block":`+call+`}}`),
		message,
		logEvent(3, "tool/call", `{"turn":1,"step":1,"callId":"c1","name":"list_agents","arguments":"{}"}`),
		result,
	}))
	require.NoError(t, store.Close())
	code, stdout, stderr := run(t, "show", "--store", root, "model")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "session model createdAt=1970-01-01T00:00:00.001Z depth=0\n"+
		"    0  step/start            {\"turn\":1,\"step\":1}\n"+
		"    1  assistant/chunk       {\"turn\":1,\"step\":1,\"chunk\":{\"type\":\"block-end\",\"index\":0,\"block\":{\"type…\n"+
		"    2  assistant/message     \"[tool-call list_agents {}]\"\n"+
		"    3  tool/call             list_agents {}\n"+
		"    4  tool/result           \"no children\"\n", stdout)
}

func TestShowNamesAMalformedDescriptor(t *testing.T) {
	code, stdout, _ := run(t, "show", "--store", testStore(t), "child-a")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "    2  subagent/descriptor   persisted subagent descriptor provider must be a string\n")
}

func TestShowIsReadOnlyOnATornLog(t *testing.T) {
	root := testStore(t)
	path, err := logpath.Path(root, "/work", "child-b")
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"turn/st`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	code, stdout, _ := run(t, "show", "--store", root, "child-b")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "    3  turn/end")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)
}

func TestShowFailsNamingTheCode(t *testing.T) {
	code, _, stderr := run(t, "show", "--store", testStore(t), "nobody")
	require.Equal(t, 1, code)
	require.Equal(t, "dsh-actors show: SESSION_QUERY_SESSION_NOT_FOUND: session \"nobody\" not found\n", stderr)
}

func TestShowUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"show"}, {"show", "a", "b"}, {"show", "--json", "a"}} {
		code, _, stderr := run(t, args...)
		require.Equal(t, 2, code)
		require.Contains(t, stderr, showUsage)
	}
}

// TestShowAcceptsNoIndex: show prints the same with and without --no-index
// and never opens the derived index, so a file the index would refuse (or
// none) in the root changes nothing.
func TestShowAcceptsNoIndex(t *testing.T) {
	root := testStore(t)
	code, want, stderr := run(t, "show", "--store", root, "child-b")
	require.Zero(t, code, stderr)
	foreign := filepath.Join(root, index.FileName)
	require.NoFileExists(t, foreign, "show opens no index")
	require.NoError(t, os.WriteFile(foreign, []byte("SQLite format 3\x00not an index"), 0o600))
	for _, args := range [][]string{{"--no-index"}, nil} {
		code, got, stderr := run(t, append([]string{"show", "--store", root, "child-b"}, args...)...)
		require.Zero(t, code, stderr)
		require.Equal(t, want, got, "%v", args)
	}
	code, _, stderr = run(t, "show", "--no-index", "--store", root, "ghost")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "SESSION_QUERY_SESSION_NOT_FOUND")
}

// TestShowPrintsCreatedAtWithThreeMillisecondDigits: the header's time
// has the fixed width of JavaScript's toISOString whatever its
// milliseconds, so whole and round seconds line up with the rest.
func TestShowPrintsCreatedAtWithThreeMillisecondDigits(t *testing.T) {
	for ms, want := range map[int64]string{
		1785544945100: "createdAt=2026-08-01T00:42:25.100Z",
		1785544945000: "createdAt=2026-08-01T00:42:25.000Z",
		1785544945123: "createdAt=2026-08-01T00:42:25.123Z",
	} {
		require.Equal(t, "session s "+want+" depth=0", describeHeader(dsh.Header{ID: "s", CreatedAt: ms}))
	}
}
