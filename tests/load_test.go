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

	"github.com/stretchr/testify/require"
)

var loadFor = flag.Duration("load", 0,
	"run TestServeUnderLoad for this long against `dsh-actors serve` (e.g. -load 10s); 0 skips it")

// Shape of the load test (issue 5): clients × subagent.list on a parent
// with children, while every client streams the live frames.
const (
	loadClients  = 64
	loadChildren = 1000
	loadDrivers  = 4 // goroutines prompting children to produce live events
)

// TestServeUnderLoad runs serve on loopback, gives one parent 1,000
// continuable children, then for -load: 64 clients each stream
// /events and call subagent.list in a loop while drivers send
// follow-ups to the children (cold resumes, turns, settlements). It reports
// the list latency p50/p99 and requires zero errors and, for every client,
// every event of every prompted child exactly once.
func TestServeUnderLoad(t *testing.T) {
	if *loadFor == 0 {
		t.Skip("pass -load 10s to run the load test")
	}
	bin := buildServe(t)
	s := startServe(t, bin, t.TempDir())
	parentID, children := spawnChildren(t, s.url, loadChildren)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * loadClients}}
	defer client.CloseIdleConnections()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streams := make([]*frameRecorder, loadClients)
	for i := range streams {
		streams[i] = openFrameRecorder(t, ctx, client, s.url)
	}
	window, stop := context.WithTimeout(ctx, *loadFor)
	defer stop()
	lists := runListers(window, client, s.url, parentID)
	prompted := runDrivers(window, client, s.url, parentID, children)
	latencies, listErrors := lists()
	touched, promptErrors := prompted()

	awaitCatalogSettled(t, s.url, parentID)
	expected := announcedSeqs(t, s.url, parentID, children, touched)
	lost := awaitFrames(streams, expected, 30*time.Second)
	cancel()
	report(t, latencies, listErrors, promptErrors, len(touched), streams, lost)
	require.Zero(t, listErrors, "subagent.list errors")
	require.Zero(t, promptErrors, "subagent.prompt errors")
	require.Zero(t, lost, "frames lost or duplicated")
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
	mustCall(t, base, "session.prompt", map[string]any{"sessionId": top.SessionID, "content": text(script.String())}, nil)
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
func runListers(ctx context.Context, client *http.Client, base, parentID string) func() ([]time.Duration, int) {
	var mu sync.Mutex
	var latencies []time.Duration
	var failures atomic.Int64
	var wg sync.WaitGroup
	for range loadClients {
		wg.Go(func() {
			for ctx.Err() == nil {
				began := time.Now()
				result, err := call(context.Background(), client, base, "subagent.list", map[string]any{"parentSessionId": parentID})
				took := time.Since(began)
				var c catalog
				if err != nil || !result.OK || json.Unmarshal(result.Value, &c) != nil || len(c.Entries) != loadChildren {
					failures.Add(1)
				}
				mu.Lock()
				latencies = append(latencies, took)
				mu.Unlock()
			}
		})
	}
	return func() ([]time.Duration, int) {
		wg.Wait()
		return latencies, int(failures.Load())
	}
}

// runDrivers sends follow-ups to the children round-robin; the returned
// wait gives the set of children prompted and the number of failures.
func runDrivers(ctx context.Context, client *http.Client, base, parentID string, children []string) func() (map[string]bool, int) {
	var next atomic.Int64
	var failures atomic.Int64
	var mu sync.Mutex
	touched := map[string]bool{}
	var wg sync.WaitGroup
	for range loadDrivers {
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
		wg.Wait()
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
// The length before the load is that of a child nobody prompted.
func announcedSeqs(t *testing.T, base, parentID string, children []string, touched map[string]bool) map[string][]int64 {
	t.Helper()
	untouched := slices.IndexFunc(children, func(id string) bool { return !touched[id] })
	require.GreaterOrEqual(t, untouched, 0, "some child was not prompted")
	before := int64(len(historyEvents(t, base, parentID, children[untouched])))
	expected := map[string][]int64{}
	for child := range touched {
		for _, e := range historyEvents(t, base, parentID, child) {
			if e.Seq >= before && e.Type != "session/end-seed" {
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
}

func openFrameRecorder(t *testing.T, ctx context.Context, client *http.Client, base string) *frameRecorder {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events", nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	r := &frameRecorder{seqs: map[string][]int64{}}
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 64<<10), 16<<20)
	require.True(t, lines.Scan())
	require.Equal(t, ": connected", lines.Text())
	go func() {
		defer resp.Body.Close()
		for lines.Scan() {
			r.record(lines.Text())
		}
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
			SessionID string              `json:"sessionId"`
			Event     struct{ Seq int64 } `json:"event"`
		} `json:"payload"`
	}
	if json.Unmarshal([]byte(data), &frame) != nil || frame.Method != "session/event" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frames++
	r.seqs[frame.Payload.SessionID] = append(r.seqs[frame.Payload.SessionID], frame.Payload.Event.Seq)
}

// faults counts the children whose received seqs differ from the expected
// ones (a lost, duplicated or reordered event).
func (r *frameRecorder) faults(expected map[string][]int64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	faults := 0
	for child, seqs := range expected {
		if !slices.Equal(r.seqs[child], seqs) {
			faults++
		}
	}
	return faults
}

// awaitFrames waits until every recorder has every expected seq (or the
// timeout) and returns the total number of faults.
func awaitFrames(streams []*frameRecorder, expected map[string][]int64, within time.Duration) int {
	deadline := time.Now().Add(within)
	for {
		lost := 0
		for _, r := range streams {
			lost += r.faults(expected)
		}
		if lost == 0 || time.Now().After(deadline) {
			return lost
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func report(t *testing.T, latencies []time.Duration, listErrors, promptErrors, prompted int, streams []*frameRecorder, lost int) {
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
		*loadFor, loadClients, loadChildren, len(latencies), percentile(0.50), percentile(0.99), percentile(1), listErrors)
	t.Logf("load: subagent.prompt to %d children, errors=%d; session/event frames received=%d (%d per client); lost or duplicated=%d",
		prompted, promptErrors, frames, frames/len(streams), lost)
}
