package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/stretchr/testify/require"
)

var loadFor = flag.Duration("load", 0,
	"run TestServeUnderLoad at full size for this long against `dsh-actors serve` (e.g. -load 10s); 0 runs a short version")

// loadShape sizes the load test: clients × subagent.list on a parent with
// children, while every client streams the live frames and drivers prompt
// the children.
type loadShape struct {
	clients, children, drivers int
	window                     time.Duration
}

// fullLoad is the full load shape, run by `make load`; shortLoad keeps the
// test in the default suite (a few seconds) so that it cannot rot.
var (
	fullLoad  = loadShape{clients: 64, children: 1000, drivers: 4}
	shortLoad = loadShape{clients: 4, children: 30, drivers: 2, window: 2 * time.Second}
)

// TestServeUnderLoad runs serve on loopback, gives one parent its
// continuable children, then for the window: the clients each stream
// /events and call subagent.list in a loop while drivers send follow-ups to
// the children (cold resumes, turns, settlements). It reports the list
// latency p50/p99 and requires zero errors and, for every client, every
// event of every prompted child exactly once. With -load it runs the full
// shape for that long, else the short one.
func TestServeUnderLoad(t *testing.T) {
	shape := shortLoad
	if *loadFor > 0 {
		shape = fullLoad
		shape.window = *loadFor
	}
	bin := buildServe(t)
	s := startServe(t, bin, t.TempDir())
	parentID, children := spawnChildren(t, s.url, shape.children)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * shape.clients}}
	defer client.CloseIdleConnections()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streams := make([]*frameRecorder, shape.clients)
	for i := range streams {
		streams[i] = openFrameRecorder(t, ctx, client, s.url)
	}
	window, stop := context.WithTimeout(ctx, shape.window)
	defer stop()
	lists := runListers(t, window, shape, client, s.url, parentID)
	prompted := runDrivers(t, window, shape.drivers, client, s.url, parentID, children[1:])
	latencies, listErrors := lists()
	touched, promptErrors := prompted()

	awaitCatalogSettled(t, s.url, parentID)
	expected := announcedSeqs(t, s.url, parentID, children[0], touched)
	awaitSentinel(t, s.url, streams)
	var faults []string
	for i, r := range streams {
		faults = append(faults, r.faults(i, expected)...)
	}
	cancel()
	report(t, shape, latencies, listErrors, promptErrors, len(touched), streams, len(faults))
	require.Zero(t, listErrors, "subagent.list errors")
	require.Zero(t, promptErrors, "subagent.prompt errors")
	require.NotZero(t, len(touched), "no child was prompted")
	require.Empty(t, faults, "frames lost, duplicated or reordered")
}

// spawnChildren creates a top-level session whose one turn spawns n
// children, and waits until all are listed and settled.
func spawnChildren(t *testing.T, base string, n int) (string, []string) {
	t.Helper()
	var top struct{ SessionID string }
	mustCall(t, base, "session.create", map[string]any{}, &top)
	var script strings.Builder
	for i := range n {
		fmt.Fprintf(&script, "spawn child-%04d: reply ready %d\n", i, i)
	}
	mustCall(t, base, "session.prompt", map[string]any{"sessionId": top.SessionID, "mode": "queue", "content": text(script.String())}, nil)
	c := awaitCatalog(t, base, top.SessionID, func(c catalog) bool { return len(c.Entries) == n })
	ids := make([]string, n)
	for i, e := range c.Entries {
		ids[i] = e.ID
	}
	awaitCatalogSettled(t, base, top.SessionID)
	return top.SessionID, ids
}

func awaitCatalogSettled(t *testing.T, base, parentID string) {
	t.Helper()
	awaitCatalog(t, base, parentID, func(c catalog) bool {
		return !slices.ContainsFunc(c.Entries, func(e struct{ Kind, ID, Label, Activity, Reason string }) bool {
			return e.Activity != "inactive"
		})
	})
}

// runListers starts the clients' subagent.list loops; the returned wait
// gives every call's latency and the number of failed calls.
func runListers(t *testing.T, ctx context.Context, shape loadShape, client *http.Client, base, parentID string) func() ([]time.Duration, int) {
	var mu sync.Mutex
	var latencies []time.Duration
	var failures atomic.Int64
	var wg sync.WaitGroup
	for range shape.clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				began := time.Now()
				result, err := call(context.Background(), client, base, "subagent.list", map[string]any{"parentSessionId": parentID})
				took := time.Since(began)
				var c catalog
				if err != nil || !result.OK || json.Unmarshal(result.Value, &c) != nil || len(c.Entries) != shape.children {
					failures.Add(1)
				}
				mu.Lock()
				latencies = append(latencies, took)
				mu.Unlock()
			}
		})
	}
	return func() ([]time.Duration, int) {
		testkit.Wait(t, &wg, "the subagent.list clients to stop after the window")
		return latencies, int(failures.Load())
	}
}

// runDrivers runs drivers goroutines sending follow-ups to the children
// round-robin; the returned wait gives the set of children prompted and the
// number of failures.
func runDrivers(t *testing.T, ctx context.Context, drivers int, client *http.Client, base, parentID string, children []string) func() (map[string]bool, int) {
	var next atomic.Int64
	var failures atomic.Int64
	var mu sync.Mutex
	touched := map[string]bool{}
	var wg sync.WaitGroup
	for range drivers {
		wg.Go(func() {
			for ctx.Err() == nil {
				child := children[int(next.Add(1))%len(children)]
				result, err := call(context.Background(), client, base, "subagent.prompt", map[string]any{
					"parentSessionId": parentID, "childSessionId": child, "content": text("reply pong")})
				if err != nil || !result.OK {
					failures.Add(1)
					continue
				}
				mu.Lock()
				touched[child] = true
				mu.Unlock()
			}
		})
	}
	return func() (map[string]bool, int) {
		testkit.Wait(t, &wg, "the subagent.prompt drivers to stop after the window")
		return touched, int(failures.Load())
	}
}

// historyEvents reads a child's whole log through subagent.history (which
// never activates it).
func historyEvents(t *testing.T, base, parentID, child string) []struct {
	Type string
	Seq  int64
} {
	t.Helper()
	var page struct {
		Events []struct {
			Event struct {
				Type string
				Seq  int64
			} `json:"event"`
		} `json:"events"`
	}
	mustCall(t, base, "subagent.history", map[string]any{"parentSessionId": parentID, "childSessionId": child, "maxMessages": 1 << 20}, &page)
	events := make([]struct {
		Type string
		Seq  int64
	}, len(page.Events))
	for i, e := range page.Events {
		events[i] = e.Event
	}
	return events
}

// announcedSeqs gives, for every prompted child, the seqs its log gained
// during the load that a stream must have announced: all of them except
// the session/end-seed marker each cold resume appends before publication.
// The length before the load is that of baseline, a child nobody prompted.
func announcedSeqs(t *testing.T, base, parentID, baseline string, touched map[string]bool) map[string][]int64 {
	t.Helper()
	require.False(t, touched[baseline], "the baseline child was prompted")
	before := int64(len(historyEvents(t, base, parentID, baseline)))
	expected := map[string][]int64{}
	for child := range touched {
		for _, e := range historyEvents(t, base, parentID, child) {
			if e.Seq >= before && e.Type != vocab.TypeSessionEndSeed {
				expected[child] = append(expected[child], e.Seq)
			}
		}
	}
	return expected
}

// frameRecorder reads one /events stream and keeps, per session, the
// seqs of its session/event frames in arrival order.
type frameRecorder struct {
	mu     sync.Mutex
	seqs   map[string][]int64
	frames int
	ended  map[string]bool // sessions whose turn/end came
	closed bool            // the stream ended
	change *sync.Cond      // on mu: a turn/end came or the stream ended
}

// awaitEnd blocks until a turn/end of session id came or the stream
// ended, failing t when neither happened within testkit.WaitLimit (the
// waiting goroutine then ends with the stream).
func (r *frameRecorder) awaitEnd(t *testing.T, id string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.mu.Lock()
		defer r.mu.Unlock()
		for !r.ended[id] && !r.closed {
			r.change.Wait()
		}
	}()
	testkit.Receive(t, done, "the turn/end of session "+id+" on an /events stream")
}

func openFrameRecorder(t *testing.T, ctx context.Context, client *http.Client, base string) *frameRecorder {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events", nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	r := &frameRecorder{seqs: map[string][]int64{}, ended: map[string]bool{}}
	r.change = sync.NewCond(&r.mu)
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 64<<10), 16<<20)
	require.True(t, lines.Scan())
	require.Equal(t, ": connected", lines.Text())
	go func() {
		defer resp.Body.Close()
		for lines.Scan() {
			r.record(lines.Text())
		}
		r.mu.Lock()
		r.closed = true
		r.change.Broadcast()
		r.mu.Unlock()
	}()
	return r
}

func (r *frameRecorder) record(line string) {
	data, ok := strings.CutPrefix(line, "data: ")
	if !ok {
		return
	}
	var frame struct {
		Method  string `json:"method"`
		Payload struct {
			SessionID string `json:"sessionId"`
			Event     struct {
				Seq  int64
				Type string
			} `json:"event"`
		} `json:"payload"`
	}
	if json.Unmarshal([]byte(data), &frame) != nil || frame.Method != "session/event" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frames++
	r.seqs[frame.Payload.SessionID] = append(r.seqs[frame.Payload.SessionID], frame.Payload.Event.Seq)
	if frame.Payload.Event.Type == vocab.TypeTurnEnd {
		r.ended[frame.Payload.SessionID] = true
		r.change.Broadcast()
	}
}

// faults names, for stream i, each child whose received seqs differ from
// the expected ones (a lost, duplicated or reordered event), with both
// lists, so that a failure shows which it was.
func (r *frameRecorder) faults(i int, expected map[string][]int64) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var faults []string
	for child, seqs := range expected {
		if got := r.seqs[child]; !slices.Equal(got, seqs) {
			faults = append(faults, fmt.Sprintf("stream %d, child %s: received seqs %v, its log has %v", i, child, got, seqs))
		}
	}
	return faults
}

// awaitSentinel prompts a fresh session once the load is over and waits
// until every stream has carried its turn/end or ended. A stream delivers
// its frames in the order they were emitted, so by then it carries every
// frame of the load, however slowly the machine runs: no deadline decides
// what counts as lost.
func awaitSentinel(t *testing.T, base string, streams []*frameRecorder) {
	t.Helper()
	var sentinel struct{ SessionID string }
	mustCall(t, base, "session.create", map[string]any{}, &sentinel)
	mustCall(t, base, "session.prompt", map[string]any{"sessionId": sentinel.SessionID, "mode": "queue", "content": text("reply done")}, nil)
	for _, r := range streams {
		r.awaitEnd(t, sentinel.SessionID)
	}
}

func report(t *testing.T, shape loadShape, latencies []time.Duration, listErrors, promptErrors, prompted int, streams []*frameRecorder, lost int) {
	slices.Sort(latencies)
	percentile := func(p float64) time.Duration {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))]
	}
	frames := 0
	for _, r := range streams {
		r.mu.Lock()
		frames += r.frames
		r.mu.Unlock()
	}
	t.Logf("load %s: %d clients, subagent.list over %d children: calls=%d p50=%s p99=%s max=%s errors=%d",
		shape.window, shape.clients, shape.children, len(latencies), percentile(0.50), percentile(0.99), percentile(1), listErrors)
	t.Logf("load: subagent.prompt to %d children, errors=%d; session/event frames received=%d (%d per client); lost or duplicated=%d",
		prompted, promptErrors, frames, frames/len(streams), lost)
}
