package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/stretchr/testify/require"
)

// These tests pin behaviour found by running the original harness's
// reader (commit 751fa4c8b6) and this package over the same logs.

// Pre-identity message events are upgraded in memory exactly as the
// original's migrateLegacyMessageEvent does (key order included), and the
// file is left untouched.
func TestReadUpgradesLegacyMessagesInMemory(t *testing.T) {
	s := openStore(t)
	h := header("old")
	body := lines(
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`,
		`{"type":"user/message","seq":1,"time":1,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
		`{"type":"assistant/message","seq":2,"time":1,"data":{"turn":1,"step":1,"content":[],"provenance":{"kind":"x","provider":"p","model":"m"}},"surfaceOp":"append"}`,
		`{"type":"tool/result","seq":3,"time":1,"data":{"turn":1,"callId":"c1","content":[{"type":"text","text":"long"}],"isError":false,"step":1},"surfaceOp":"append"}`,
		`{"type":"tool/result","seq":4,"time":1,"data":{"turn":1,"callId":"c1","content":[],"isError":false,"step":1},"surfaceOp":{"op":"replace","start":3,"end":3},"sourceEventSeqs":[3]}`,
		`{"type":"steering/message","seq":5,"time":1,"data":{"turn":1,"content":[],"source":{"kind":"user"}},"surfaceOp":"append"}`,
		`{"type":"turn/end","seq":6,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
	)
	path := writeRaw(t, s, h, headerLineOf(t, h)+body)

	want := []string{
		`{"turn":1}`,
		`{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"id":"legacy-message:old:1","role":"user"}`,
		`{"turn":1,"step":1,"message":{"id":"legacy-message:old:2","role":"assistant","content":[],"source":{"kind":"model","provider":"p","model":"m"}}}`,
		`{"turn":1,"step":1,"message":{"id":"legacy-message:old:3","role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"long"}],"isError":false}],"source":{"kind":"tool","callId":"c1"}}}`,
		`{"turn":1,"step":1,"message":{"id":"legacy-message:old:3","role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[],"isError":false}],"source":{"kind":"tool","callId":"c1"}}}`,
		`{"turn":1,"message":{"id":"legacy-message:old:5","role":"user","content":[],"source":{"kind":"user"}}}`,
		`{"turn":1,"reason":{"kind":"completed"}}`,
	}
	for _, read := range []func(context.Context, string) (*Log, error){s.Inspect, s.Load} {
		log, err := read(context.Background(), "old")
		require.NoError(t, err)
		got := make([]string, len(log.Events))
		for i, e := range log.Events {
			got[i] = string(e.Data)
		}
		require.Equal(t, want, got)
	}
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, headerLineOf(t, h)+body, string(raw), "conversions are never written back")
}

// Message events of the wrong shape make the read fail, as the original's
// assertMessageEventShape does on inspect and load, wherever they sit.
func TestReadRefusesMalformedMessages(t *testing.T) {
	const (
		user   = `{"content":[],"source":{"kind":"user"},"role":"user","id":"m"}`
		model  = `{"kind":"model","provider":"p","model":"m"}`
		result = `{"type":"tool-result","toolCallId":"c","content":[]}`
	)
	assistant := func(source string) string {
		return `{"turn":1,"step":1,"message":{"role":"assistant","content":[],"source":` + source + `,"id":"a"}}`
	}
	tool := func(source, content string) string {
		return `{"turn":1,"step":1,"message":{"source":` + source + `,"content":` + content + `,"role":"user","id":"t"}}`
	}
	cases := []struct{ typ, data, problem string }{
		{"user/message", `{"content":[],"source":{"kind":"user"},"role":"user","id":""}`, "lacks an identified message"},
		{"user/message", `{"content":[],"source":{"kind":"user"},"role":"user"}`, "lacks an identified message"},
		{"user/message", `"text"`, "lacks an identified message"},
		{"user/message", `{"content":[],"source":{"kind":"user"},"role":"assistant","id":"m"}`, `message must have role "user"`},
		{"user/message", `{"content":[],"source":{},"role":"user","id":"m"}`, "message has invalid source"},
		{"user/message", `{"content":"hi","source":{"kind":"user"},"role":"user","id":"m"}`, "message has invalid content"},
		{"assistant/message", `{"turn":1,"message":` + user + `}`, `message must have role "assistant"`},
		{"assistant/message", assistant(`{"kind":"user"}`), "message must have model source"},
		{"assistant/message", assistant(`{"kind":"model","provider":"p"}`), "message must have model source"},
		{"assistant/message", `{"turn":1,"step":1,"content":[],"provenance":"nope"}`, "message must have model source"},
		{"tool/result", tool(`{"kind":"tool"}`, `[`+result+`]`), "message must have tool source"},
		{"tool/result", tool(`{"kind":"tool","callId":"c"}`, `[]`), "message must contain one tool-result block"},
		{"tool/result", tool(`{"kind":"tool","callId":"c"}`, `[`+result+`,`+result+`]`), "message must contain one tool-result block"},
		{"tool/result", tool(`{"kind":"tool","callId":"c"}`, `[{"type":"text","toolCallId":"c","content":[]}]`), "message must contain one tool-result block"},
		{"tool/result", tool(`{"kind":"tool","callId":"d"}`, `[`+result+`]`), "message has mismatched tool call ids"},
		{"steering/message", `{"turn":1,"message":{"content":[],"source":{"kind":"user"},"role":"user"}}`, "lacks an identified message"},
	}
	for _, c := range cases {
		t.Run(c.typ+" "+c.problem, func(t *testing.T) {
			s := openStore(t)
			h := header("bad")
			path := writeRaw(t, s, h, headerLineOf(t, h)+lines(
				`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`,
				`{"type":"assistant/message","seq":1,"time":1,"data":`+assistant(model)+`,"surfaceOp":"append"}`,
				`{"type":"`+c.typ+`","seq":2,"time":1,"data":`+c.data+`,"surfaceOp":"append"}`,
			))
			for _, read := range []func(context.Context, string) (*Log, error){s.Inspect, s.Load} {
				_, err := read(context.Background(), "bad")
				require.ErrorIs(t, err, ErrCorrupt)
				require.EqualError(t, err, `stored session "bad" failed validation: session event at seq 2 `+
					c.problem+" (raw log: "+path+")")
				readable, line, ok := ReadablePrefix(err)
				require.True(t, ok, "the events before the refused message stay readable")
				require.Zero(t, line, "a refused message names its seq, not a line")
				require.Equal(t, []string{"turn/start", "assistant/message"}, eventTypes(readable))
			}
		})
	}
}

// The listing guard takes any JSON number as a version, and a version is
// foreign only when it is a number other than 0.
func TestHeaderVersionIsAnyNumber(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	for _, c := range []struct{ id, version string }{{"frac", "1.5"}, {"float-zero", "0.0"}, {"neg-zero", "-0"}} {
		writeRaw(t, s, Header{ID: c.id}, `{"type":"session","version":`+c.version+`,"id":"`+c.id+`","createdAt":1,"delegationDepth":0}`+"\n")
	}
	writeRaw(t, s, Header{ID: "text"}, `{"type":"session","version":"0","id":"text","createdAt":1,"delegationDepth":0}`+"\n")
	headers, err := s.List(ctx)
	require.NoError(t, err)
	var ids []string
	for _, h := range headers {
		ids = append(ids, h.ID)
	}
	require.ElementsMatch(t, []string{"frac", "float-zero", "neg-zero"}, ids)

	_, err = s.Inspect(ctx, "frac")
	require.ErrorIs(t, err, errUnsupported)
	require.ErrorContains(t, err, `session "frac" uses log format v1.5, but this harness reads only v0`)
	for _, id := range []string{"float-zero", "neg-zero"} {
		_, err = s.Inspect(ctx, id)
		require.NoError(t, err, id)
	}
	_, err = s.Inspect(ctx, "text")
	require.ErrorIs(t, err, ErrCorrupt, "a string version is no version at all")
	require.ErrorContains(t, err, "corrupt session log: first line is not a session header")
}

// A header that passes the listing guard but cannot be listed makes the
// whole listing fail, and its own read too: an empty cwd names no storage
// path, and the retired policy keys are refused outright.
func TestHeadersTheListingRefuses(t *testing.T) {
	cases := []struct{ name, line, msg string }{
		{"empty cwd", `{"type":"session","version":0,"id":"h","createdAt":1,"cwd":"","delegationDepth":0}`,
			`corrupt session log "PATH": header id cannot name a storage path`},
		{"sandboxMode", `{"type":"session","version":0,"id":"h","createdAt":1,"delegationDepth":0,"sandboxMode":"x"}`,
			"session header uses retired policy baseline fields"},
		{"approvalPolicy", `{"type":"session","version":0,"id":"h","createdAt":1,"delegationDepth":0,"approvalPolicy":"x"}`,
			"session header uses retired policy baseline fields"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t)
			path := filepath.Join(s.Root(), "_no-cwd", "h", logpath.FileName)
			if strings.Contains(c.line, `"cwd":""`) {
				path = filepath.Join(s.Root(), "--root--", "h", logpath.FileName)
			}
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
			require.NoError(t, os.WriteFile(path, []byte(c.line+"\n"), 0o600))
			want := strings.ReplaceAll(c.msg, "PATH", path)
			_, err := s.List(context.Background())
			require.ErrorIs(t, err, ErrCorrupt)
			require.EqualError(t, err, want)
			_, err = s.Inspect(context.Background(), "h")
			require.ErrorIs(t, err, ErrCorrupt)
			require.EqualError(t, err, want)
			var h Header
			require.ErrorIs(t, h.UnmarshalJSON([]byte(c.line)), ErrCorrupt)
		})
	}
}

// A flat-layout log or a log of the other encoding anywhere under the root makes
// every lookup fail, not only the lookup of that id; like the original's
// once-per-backend root check, the verdict is kept by the store.
func TestStrayArtifactsAnywhereRefuseLookups(t *testing.T) {
	strays := map[string]string{
		"flat":       filepath.Join("--elsewhere--", "stray.jsonl"),
		"compressed": filepath.Join("--elsewhere--", "other", "session.jsonl.zstd"),
	}
	for name, rel := range strays {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			healthy, err := OpenJSONL(root)
			require.NoError(t, err)
			defer healthy.Close()
			require.NoError(t, healthy.Create(ctx, header("fine"), turnEvents(0, 2)))

			stray := filepath.Join(root, rel)
			require.NoError(t, os.MkdirAll(filepath.Dir(stray), 0o700))
			require.NoError(t, os.WriteFile(stray, []byte("x\n"), 0o600))
			_, err = healthy.Inspect(ctx, "fine")
			require.NoError(t, err, "this store checked the root before the stray appeared")

			s, err := OpenJSONL(root, WithCompression(CompressionNone))
			require.NoError(t, err)
			defer s.Close()
			for _, read := range []func(context.Context, string) (*Log, error){s.Inspect, s.Load} {
				_, err = read(ctx, "fine")
				require.ErrorIs(t, err, errUnsupported)
				require.ErrorContains(t, err, stray)
			}
			require.NoError(t, os.Remove(stray))
			_, err = s.Inspect(ctx, "fine")
			require.ErrorIs(t, err, errUnsupported, "the refusal is kept for the life of the store")
		})
	}
}

// FuzzCheckMessages: message validation and the legacy upgrade never
// panic, and an upgraded payload is valid JSON that is no longer legacy.
func FuzzCheckMessages(f *testing.F) {
	f.Add(uint8(0), `{"content":[],"source":{"kind":"user"}}`)
	f.Add(uint8(1), `{"turn":1,"content":[],"provenance":{"provider":"p","model":"m"}}`)
	f.Add(uint8(2), `{"callId":"c","content":[],"isError":true}`)
	f.Add(uint8(3), `{"turn":1,"content":[],"source":{"kind":"user"}}`)
	f.Add(uint8(2), `{"turn":1,"message":{"source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[]}],"role":"user","id":"t"}}`)
	types := []string{"user/message", "assistant/message", "tool/result", "steering/message"}
	f.Fuzz(func(t *testing.T, which uint8, data string) {
		typ := types[int(which)%len(types)]
		e := Event{Type: typ, Seq: 1, Data: []byte(data), SurfaceOp: []byte(`{"op":"replace","start":0,"end":0}`)}
		if upgraded, ok := upgradeLegacyMessage("s", e, map[int64]string{0: "m0"}); ok {
			require.True(t, json.Valid(upgraded), "%s", upgraded)
			require.False(t, isLegacyMessage(typ, upgraded))
			e.Data = upgraded
		}
		if id, problem := checkMessageShape(typ, e.Data); problem == "" {
			require.NotEmpty(t, id)
		}
		_ = checkMessages("s", []Event{e}, "p")
	})
}

// eventTypes are the types of events, in order.
func eventTypes(events []Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Type
	}
	return out
}
