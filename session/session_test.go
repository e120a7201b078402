package session

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dsh-actors/dsh-actors/internal/faultfs"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// openStore opens a JSONL store in a fresh temporary root and closes it at
// the end of the test.
func openStore(t *testing.T, opts ...Option) *JSONL {
	t.Helper()
	s, err := OpenJSONL(t.TempDir(), append([]Option{WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func header(id string) Header {
	return Header{ID: id, CreatedAt: 1789000001000, Cwd: "/work/project"}
}

func ev(seq int64, typ, data string) Event {
	return Event{Type: typ, Seq: seq, Time: 1785544945198 + seq, Data: json.RawMessage(data)}
}

// turnEvents returns n events from seq first: a completed turn padded with
// text events.
func turnEvents(first int64, n int) []Event {
	out := make([]Event, 0, n)
	for i := range n {
		seq := first + int64(i)
		out = append(out, ev(seq, "todo/write", fmt.Sprintf(`{"i":%d}`, seq)))
	}
	return out
}

func logPathOf(t *testing.T, s *JSONL, h Header) string {
	t.Helper()
	p, err := logpath.Path(s.Root(), h.Cwd, h.ID)
	require.NoError(t, err)
	return p
}

func TestHeaderMatchesReferenceSampleA(t *testing.T) {
	const sampleA = `{"type":"session","version":0,"id":"33333333-3333-4333-8333-333333333333",` +
		`"createdAt":1789000001000,"cwd":"{{cwd}}","parentSession":"11111111-1111-4111-8111-111111111111",` +
		`"origin":"subagent","delegationDepth":1}`
	h := Header{
		ID: "33333333-3333-4333-8333-333333333333", CreatedAt: 1789000001000, Cwd: "{{cwd}}",
		ParentSession: "11111111-1111-4111-8111-111111111111", Origin: "subagent", DelegationDepth: 1,
	}
	got, err := json.Marshal(h)
	require.NoError(t, err)
	require.Equal(t, sampleA, string(got))

	seed := 42
	h.SeedLength, h.AgentPreset, h.Cwd = &seed, "preset<&>", "/abs"
	got, err = h.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, `{"type":"session","version":0,"id":"33333333-3333-4333-8333-333333333333",`+
		`"createdAt":1789000001000,"cwd":"/abs","parentSession":"11111111-1111-4111-8111-111111111111",`+
		`"seedLength":42,"origin":"subagent","delegationDepth":1,"agentPreset":"preset<&>"}`, string(got))

	got, err = json.Marshal(Header{ID: "x"})
	require.NoError(t, err)
	require.Equal(t, `{"type":"session","version":0,"id":"x","createdAt":0,"delegationDepth":0}`, string(got))
}

func TestEventEnvelopeKeyOrder(t *testing.T) {
	e := Event{
		Type: "tool/result", Seq: 118, Time: 1785730446730, Data: json.RawMessage(`{"b":1,"a":"<\u2028>"}`),
		SourceEventSeqs: []int64{117}, SurfaceOp: json.RawMessage(`"append"`), Ignorable: true,
	}
	got, err := e.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, `{"type":"tool/result","seq":118,"time":1785730446730,"data":{"b":1,"a":"<\u2028>"},`+
		`"sourceEventSeqs":[117],"surfaceOp":"append","ignorable":true}`, string(got))

	got, err = json.Marshal(Event{Type: "x", Seq: 1, Time: 2})
	require.NoError(t, err)
	require.Equal(t, `{"type":"x","seq":1,"time":2,"data":null}`, string(got))

	got, err = json.Marshal(Event{Type: "x", SourceEventSeqs: []int64{}})
	require.NoError(t, err)
	require.Equal(t, `{"type":"x","seq":0,"time":0,"data":null,"sourceEventSeqs":[]}`, string(got))
}

func TestEncoderWithoutHTMLEscapingKeepsBytes(t *testing.T) {
	var out strings.Builder
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(Event{Type: "a<b>", Data: json.RawMessage("\"\u2028&\"")}))
	require.Equal(t, "{\"type\":\"a<b>\",\"seq\":0,\"time\":0,\"data\":\"\u2028&\"}\n", out.String())
}

func TestEncodeDataLikeJSONStringify(t *testing.T) {
	type payload struct {
		Text string `json:"text"`
		N    int    `json:"n"`
	}
	got, err := encodeData(payload{Text: "a<b>&c\u2028d\u2029\"\\\x01", N: 3})
	require.NoError(t, err)
	require.Equal(t, "{\"text\":\"a<b>&c\u2028d\u2029\\\"\\\\\\u0001\",\"n\":3}", string(got))

	got, err = encodeData(json.RawMessage("{ \"b\" : [1, 2],\n \"a\": \"x\\u2028\" }"))
	require.NoError(t, err)
	require.Equal(t, "{\"b\":[1,2],\"a\":\"x\u2028\"}", string(got))

	got, err = encodeData(nil)
	require.NoError(t, err)
	require.Equal(t, "null", string(got))

	_, err = encodeData(json.RawMessage("{"))
	require.Error(t, err)
}

func TestEncodeDataKeepsOwnedCompactTextAndCompactsTheRest(t *testing.T) {
	owned := append(make([]byte, 0, 64), `{"a":[1,2]}`...)
	got, err := encodeData(vocab.Owned(owned))
	require.NoError(t, err)
	require.Equal(t, `{"a":[1,2]}`, string(got))
	require.Same(t, &owned[0], &got[0], "compact owned text is kept, not copied")
	require.Equal(t, len(got), cap(got), "with no room to append into")

	got, err = encodeData(vocab.Owned("{ \"a\" : \"x\\u2028\" }"))
	require.NoError(t, err)
	require.Equal(t, "{\"a\":\"x\u2028\"}", string(got), "as a json.RawMessage is")

	_, err = encodeData(vocab.Owned("{"))
	require.Error(t, err)
}

func TestCreateAppendInspectRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	h := header("s-1")
	seed := []Event{ev(0, "subagent/descriptor", `{"version":1,"provider":"spawn","label":"x"}`)}
	require.NoError(t, s.Create(ctx, h, seed))
	more := []Event{
		ev(1, "turn/start", `{"turn":1}`),
		{Type: "user/message", Seq: 2, Time: 5, Data: json.RawMessage(`{"content":[],"source":{"kind":"user"},"role":"user","id":"m"}`),
			SurfaceOp: json.RawMessage(`"append"`)},
		ev(3, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`),
	}
	require.NoError(t, s.Append(ctx, "s-1", more))

	path := logPathOf(t, s, h)
	require.Equal(t, filepath.Join(s.Root(), "--work-project--", "s-1", "session.jsonl"), path)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	want := `{"type":"session","version":0,"id":"s-1","createdAt":1789000001000,"cwd":"/work/project","delegationDepth":0}` + "\n" +
		`{"type":"subagent/descriptor","seq":0,"time":1785544945198,"data":{"version":1,"provider":"spawn","label":"x"}}` + "\n" +
		`{"type":"turn/start","seq":1,"time":1785544945199,"data":{"turn":1}}` + "\n" +
		`{"type":"user/message","seq":2,"time":5,"data":{"content":[],"source":{"kind":"user"},"role":"user","id":"m"},"surfaceOp":"append"}` + "\n" +
		`{"type":"turn/end","seq":3,"time":1785544945201,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n"
	require.Equal(t, want, string(raw))

	log, err := s.Inspect(ctx, "s-1")
	require.NoError(t, err)
	require.Equal(t, h, log.Header)
	require.Equal(t, append(seed, more...), log.Events)

	headers, err := s.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []Header{h}, headers)

	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	info, err = os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), info.Mode().Perm())
}

func TestCreateRefusesExistingLog(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	require.NoError(t, s.Create(ctx, header("dup"), nil))
	err := s.Create(ctx, header("dup"), nil)
	require.ErrorIs(t, err, ErrExists)
	require.EqualError(t, err, `session "dup" already exists in this backend`)

	other, err := OpenJSONL(s.Root())
	require.NoError(t, err)
	defer other.Close()
	h := header("dup")
	h.Cwd = "/elsewhere"
	err = other.Create(ctx, h, nil)
	require.ErrorIs(t, err, ErrExists)
	require.EqualError(t, err, `session "dup" already has a persisted log on disk; load/resume it instead of creating`)
}

func TestAppendSeqMismatch(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	require.NoError(t, s.Create(ctx, header("q"), turnEvents(0, 2)))
	err := s.Append(ctx, "q", turnEvents(0, 1))
	require.ErrorIs(t, err, ErrSeqMismatch)
	require.EqualError(t, err, `append seq mismatch for "q": expected 2 at index 0, got 0`)
	err = s.Append(ctx, "q", []Event{ev(2, "a", "1"), ev(4, "a", "1")})
	require.EqualError(t, err, `append seq mismatch for "q": expected 3 at index 1, got 4`)
	require.NoError(t, s.Append(ctx, "q", turnEvents(2, 3)))
}

func TestGroupCommitManyAppenders(t *testing.T) {
	ctx := context.Background()
	faults := faultfs.New(nil)
	s := openStore(t, WithFS(faults))
	require.NoError(t, s.Create(ctx, header("g"), nil))
	reg := NewSessions(s)
	l, err := reg.Resume(ctx, "g") // the end-seed marker is seq 0
	require.NoError(t, err)

	const writers, each = 64, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				_, err := l.Append("todo/write", map[string]int{"w": w, "i": i})
				require.NoError(t, err)
				ok, err := reg.Flush(ctx, l)
				require.NoError(t, err)
				require.True(t, ok)
			}
		}()
	}
	wg.Wait()
	require.NoError(t, reg.Release(ctx, l))
	log, err := s.Inspect(ctx, "g")
	require.NoError(t, err)
	require.Len(t, log.Events, 1+writers*each)
	seen := map[string]bool{}
	for i, e := range log.Events {
		require.Equal(t, int64(i), e.Seq)
		if i > 0 {
			seen[string(e.Data)] = true
		}
	}
	require.Len(t, seen, writers*each)
	require.Less(t, faults.Syncs(), writers*each, "appends coalesce into fewer syncs than events")
}

func TestUnmarshalRoundTrip(t *testing.T) {
	seed := 3
	h := Header{ID: "a\u2028<", CreatedAt: 7, Cwd: "/x", ParentSession: "p", SeedLength: &seed,
		Origin: "subagent", DelegationDepth: 2, AgentPreset: "ap"}
	raw, err := h.MarshalJSON()
	require.NoError(t, err)
	var back Header
	require.NoError(t, json.Unmarshal(raw, &back))
	require.Equal(t, h, back)
	require.ErrorIs(t, json.Unmarshal([]byte(`{"type":"session","version":0,"id":"x"}`), &back), ErrCorrupt)

	e := Event{Type: "t", Seq: 4, Time: -5, Data: json.RawMessage(`{"a":[1,{"b":null}]}`),
		SourceEventSeqs: []int64{}, SurfaceOp: json.RawMessage(`{"op":"replace","start":1,"end":2}`)}
	raw, err = e.MarshalJSON()
	require.NoError(t, err)
	var eb Event
	require.NoError(t, json.Unmarshal(raw, &eb))
	require.Equal(t, e, eb)
	require.ErrorIs(t, json.Unmarshal([]byte(`{"type":"t","seq":"x","time":1,"data":1}`), &eb), ErrCorrupt)
}

func TestStoreGroupCommitConcurrentAppenders(t *testing.T) {
	ctx := context.Background()
	faults := faultfs.New(nil)
	s := openStore(t, WithFS(faults))
	require.NoError(t, s.Create(ctx, header("gc"), turnEvents(0, 1)))
	syncs := faults.Syncs()
	const writers, each = 64, 10
	appendConcurrently(t, s, "gc", 1, writers, each)

	log, err := s.Inspect(ctx, "gc")
	require.NoError(t, err)
	require.Len(t, log.Events, 1+writers*each, "every acknowledged event is stored")
	for i, e := range log.Events {
		require.Equal(t, int64(i), e.Seq, "contiguous, one event per seq")
	}
	require.Less(t, faults.Syncs()-syncs, writers*each, "batches share syncs")
}

func TestIdleLogsOwnNoGoroutine(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	reg := NewSessions(s)
	before := goleak.IgnoreCurrent()
	l, err := reg.Create(ctx, header("idle"), nil)
	require.NoError(t, err)
	for range 10 {
		_, err := l.Append("feedback/record", nil)
		require.NoError(t, err)
	}
	ok, err := reg.Flush(ctx, l)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, s.Append(ctx, "idle", turnEvents(10, 1)), "a direct append reuses the log")
	goleak.VerifyNone(t, before) // retries until the flusher and the writer have exited
	require.NoError(t, reg.Release(ctx, l))
}
