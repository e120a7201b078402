package modelagent_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/cpuclock"
	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// deltas is a response of n text deltas.
func deltas(n int) llmtest.Response {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = "word "
	}
	return llmtest.Say(parts...)
}

// benchTurnsPerAgent bounds the conversation a benchmarked step sends:
// every so many turns the benchmark moves to a fresh agent (started
// outside the measured time), so a step costs the same whatever b.N is.
const benchTurnsPerAgent = 8

// BenchmarkStepOverhead measures one model step (a turn of one step
// answering with 100 deltas over the loopback server) against the mock
// server's own response time: the raw exchange of the same request body
// with the same server (POST it, read the whole stream), in the same run.
// It also times the same exchange translated into chunks (what any client
// of the stream must do, logging nothing), and translated with each chunk
// appended to a session as its assistant/chunk and flushed at the end:
// the floor of a loop that logs every chunk durably, without turns, steps
// or messages (sync is that flush alone, one write and fdatasync of the
// step's log). The loop's step, too, ends with a flush of its log. It
// reports each per step in wall time and in process CPU time (server,
// client, log writer and GC together: on a loaded machine wall time is
// mostly waiting for a CPU), the loop's own overhead, the ratios to the
// raw exchange, and loop/appended-cpu: what the loop costs beyond logging
// every chunk durably.
func BenchmarkStepOverhead(b *testing.B) {
	stream := llmtest.Stream(deltas(100))
	srv := llmtest.NewServer()
	defer srv.Close()
	r := newRig(b, llmtest.DeepSeekOn(srv, 0))
	ctx := context.Background()
	logged, err := r.rt.Sessions().Create(ctx, session.Header{ID: "logged", Cwd: "/work"}, nil)
	require.NoError(b, err)
	var h *parent.Handle
	var raw, translated, appended, synced, loop timing
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%benchTurnsPerAgent == 0 {
			var err error
			h, err = r.rt.StartAgent(ctx, parentSpec(fmt.Sprint("bench-", i)))
			require.NoError(b, err)
		}
		srv.Push(stream)
		loop.add(func() {
			_, err := h.Followup(ctx, event.Text(fmt.Sprint("turn ", i)), event.Source{Kind: event.SourceUser})
			require.NoError(b, err)
			require.NoError(b, h.Activation().WhenIdle(ctx))
			durable(b, r.rt.Sessions(), h.Session())
		})
		body := srv.Last().Body
		raw.add(func() {
			exchange(b, srv, stream, body, func(r io.Reader) {
				_, err := io.Copy(io.Discard, r)
				require.NoError(b, err)
			})
		})
		translated.add(func() {
			exchange(b, srv, stream, body, func(r io.Reader) {
				for _, err := range llm.ReadStream(r) {
					require.NoError(b, err)
				}
			})
		})
		appended.add(func() {
			exchange(b, srv, stream, body, func(r io.Reader) {
				for c, err := range llm.ReadStream(r) {
					require.NoError(b, err)
					data, err := vocab.Encode(vocab.AssistantChunk{Turn: i + 1, Step: 1, Chunk: c})
					require.NoError(b, err)
					_, err = logged.Append(vocab.TypeAssistantChunk, data)
					require.NoError(b, err)
				}
			})
		})
		synced.add(func() { durable(b, r.rt.Sessions(), logged) })
	}
	b.StopTimer()
	raw.report(b, "raw", nil)
	translated.report(b, "translated", &raw)
	floor := appended.plus(synced)
	floor.report(b, "appended", &raw)
	synced.report(b, "sync", &raw)
	loop.report(b, "loop", &raw)
	b.ReportMetric(float64(loop.cpu)/float64(max(floor.cpu, 1)), "loop/appended-cpu")
	b.ReportMetric(float64((loop.wall-raw.wall).Nanoseconds())/float64(b.N), "overhead-ns/step")
}

// durable flushes live: a measured step ends when what it logged is
// durable, so no write of it runs behind into the next measurement.
func durable(b *testing.B, sessions *session.Sessions, live *session.Live) {
	ok, err := sessions.Flush(context.Background(), live)
	require.NoError(b, err)
	require.True(b, ok)
}

// timing sums the wall and process CPU time of measured calls.
type timing struct{ wall, cpu time.Duration }

func (t *timing) add(f func()) {
	start, cpu := time.Now(), cpuclock.Process()
	f()
	t.wall += time.Since(start)
	t.cpu += cpuclock.Process() - cpu
}

// plus is t and u together.
func (t timing) plus(u timing) timing { return timing{wall: t.wall + u.wall, cpu: t.cpu + u.cpu} }

// report reports t per step as name-ns/step and name-cpu-ns/step, and
// against base (when given) as name/raw and name/raw-cpu.
func (t *timing) report(b *testing.B, name string, base *timing) {
	n := float64(b.N)
	b.ReportMetric(float64(t.wall.Nanoseconds())/n, name+"-ns/step")
	b.ReportMetric(float64(t.cpu.Nanoseconds())/n, name+"-cpu-ns/step")
	if base != nil {
		b.ReportMetric(float64(t.wall)/float64(base.wall), name+"/raw")
		b.ReportMetric(float64(t.cpu)/float64(max(base.cpu, 1)), name+"/raw-cpu")
	}
}

// exchange posts body to srv answered by stream and hands the response
// body to read.
func exchange(b *testing.B, srv *llmtest.Server, stream llmtest.Behavior, body []byte, read func(io.Reader)) {
	srv.Push(stream)
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", bytes.NewReader(body))
	require.NoError(b, err)
	defer resp.Body.Close()
	read(resp.Body)
}

// BenchmarkChunkLogging measures logging a 1,000-delta response through
// the loop (scripted client, no network) in events per second, against
// appending the same assistant/chunk events to a session directly, in the
// same run and store.
func BenchmarkChunkLogging(b *testing.B) {
	response := deltas(1000)
	chunks := llmtest.Chunks(response)
	client := llmtest.NewClient()
	r := newRig(b, client)
	ctx := context.Background()
	h, err := r.rt.StartAgent(ctx, parentSpec("chunks"))
	require.NoError(b, err)
	raw, err := r.rt.Sessions().Create(ctx, session.Header{ID: "raw", Cwd: "/work"}, nil)
	require.NoError(b, err)
	var loopTime, rawTime time.Duration
	var loopEvents, rawEvents int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		client.Push(llmtest.Reply(response))
		before := h.Session().Len()
		start := time.Now()
		_, err := h.Followup(ctx, event.Text("go"), event.Source{Kind: event.SourceUser})
		require.NoError(b, err)
		require.NoError(b, h.Activation().WhenIdle(ctx))
		loopTime += time.Since(start)
		loopEvents += h.Session().Len() - before

		start = time.Now()
		for _, c := range chunks {
			data, err := vocab.Encode(vocab.AssistantChunk{Turn: i + 1, Step: 1, Chunk: c})
			require.NoError(b, err)
			_, err = raw.Append(vocab.TypeAssistantChunk, data)
			require.NoError(b, err)
		}
		rawTime += time.Since(start)
		rawEvents += len(chunks)
	}
	b.StopTimer()
	loopRate := float64(loopEvents) / loopTime.Seconds()
	rawRate := float64(rawEvents) / rawTime.Seconds()
	b.ReportMetric(loopRate, "loop-events/s")
	b.ReportMetric(rawRate, "append-events/s")
	b.ReportMetric(loopRate/rawRate, "loop/append")
}

// BenchmarkRetryTurn measures a message whose first model call fails and
// is retried at once (zero delay: a failed turn, llm/retry, a retry turn)
// against a message answered by its first call, in the same run, over the
// scripted client; retried/plain is what a retry costs the runtime beyond
// the model's own time.
func BenchmarkRetryTurn(b *testing.B) {
	client := llmtest.NewClient()
	immediate := rigRetry()
	immediate.InitialDelayMs = 0
	r := newRigRetrying(b, client, immediate)
	ctx := context.Background()
	h, err := r.rt.StartAgent(ctx, parentSpec("bench"))
	require.NoError(b, err)
	message := func(i int, steps ...llmtest.Step) time.Duration {
		client.Push(steps...)
		start := time.Now()
		_, err := h.Followup(ctx, event.Text(fmt.Sprint("turn ", i)), event.Source{Kind: event.SourceUser})
		require.NoError(b, err)
		require.NoError(b, h.Activation().WhenIdle(ctx))
		return time.Since(start)
	}
	failure := &llm.Error{Failure: vocab.Failure{Message: "down", Code: "SERVER", Status: 500}}
	var plain, retried time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		plain += message(i, llmtest.Reply(llmtest.Say("ok")))
		retried += message(i, llmtest.Fail(failure), llmtest.Reply(llmtest.Say("ok")))
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(plain.Nanoseconds())/n, "plain-ns/msg")
	b.ReportMetric(float64(retried.Nanoseconds())/n, "retried-ns/msg")
	b.ReportMetric(float64(retried)/float64(plain), "retried/plain")
}
