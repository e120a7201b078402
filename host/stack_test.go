package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// runtimeStack is the real runtime (JSONL store at root, the scripted
// agent whose turns hooks can fail or script) and the handler behind a loopback
// server, with a recorder of the RPCs it serves.
type runtimeStack struct {
	rt          *dsh.Runtime
	root        string
	compression string
	hooks       *agentHooks
	backend     *runtimeBackend
	recorder    *apiRecorder
	url         string
	stop        func() // closes the stack (also at the test's end)
}

func newRuntimeStack(t testing.TB) *runtimeStack {
	t.Helper()
	return newRuntimeStackOn(t, t.TempDir(), false, "")
}

// newRuntimeStackOn is the stack over the store at root (its logs of
// compression, "" for the default); indexed, the derived index in root
// answers search and stored titles.
func newRuntimeStackOn(t testing.TB, root string, indexed bool, compression string) *runtimeStack {
	t.Helper()
	hooks := &agentHooks{}
	opened, err := dsh.Open(dsh.Options{Dir: root, Compression: compression, NoIndex: !indexed, NewAgent: hooks.agent})
	require.NoError(t, err)
	backend := newRuntimeBackend(opened)
	handler := newHandler(backend, Options{})
	recorder := &apiRecorder{next: handler}
	server := httptest.NewServer(recorder)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			handler.Close()
			server.Close()
			backend.close()
			require.NoError(t, opened.Close())
		})
	}
	t.Cleanup(stop)
	return &runtimeStack{rt: opened, root: root, compression: compression, hooks: hooks, backend: backend,
		recorder: recorder, url: server.URL, stop: stop}
}

// settled waits until every healthy entry of parentID's catalog is inactive
// (its child's session is no longer live).
func (s *runtimeStack) settled(t testing.TB, parentID string, children int) []catalogEntry {
	t.Helper()
	var entries []catalogEntry
	require.Eventually(t, func() bool {
		all, err := s.backend.ListChildren(context.Background(), parentID)
		require.NoError(t, err)
		entries = entries[:0]
		for _, e := range all {
			if e.Kind == kindChild {
				if e.Running {
					return false
				}
				entries = append(entries, e)
			}
		}
		return len(entries) == children
	}, time.Minute, 10*time.Millisecond, "waiting for %d inactive children of %s", children, parentID)
	return entries
}

// plantCorruptChild writes a stored child of parentID with two own
// descriptors, which the catalog reports as a corrupt diagnostic.
func (s *runtimeStack) plantCorruptChild(t *testing.T, parentID string) string {
	t.Helper()
	d, err := descriptor.Snapshot(descriptor.Data{Provider: "spawn", Label: "broken"})
	require.NoError(t, err)
	data, err := json.Marshal(d)
	require.NoError(t, err)
	id := "corrupt-child"
	s.plant(t, func(store *session.JSONL) {
		plant(t, store, session.Header{ID: id, ParentSession: parentID, Origin: "subagent", DelegationDepth: 1},
			session.Event{Type: vocab.TypeSubagentDescriptor, Data: data},
			session.Event{Type: vocab.TypeSubagentDescriptor, Data: data})
	})
	return id
}

// plant is planted on the stack's store folder.
func (s *runtimeStack) plant(t testing.TB, plantAll func(store *session.JSONL)) {
	t.Helper()
	planted(t, s.root, s.compression, plantAll)
}

// apiCall is one recorded POST /api/<method>.
type apiCall struct {
	Method  string
	Payload map[string]any
}

// apiRecorder records every RPC the page makes before handing it on, can
// hold back the calls of one method before recording them (as a slow
// network would), and can cut the open event streams.
type apiRecorder struct {
	next    http.Handler
	mu      sync.Mutex
	calls   []apiCall
	streams []context.CancelFunc
	delays  map[string]time.Duration
}

// delay holds back every later call of method by d before it is recorded
// and served; 0 ends it.
func (r *apiRecorder) delay(method string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.delays == nil {
		r.delays = map[string]time.Duration{}
	}
	r.delays[method] = d
}

func (r *apiRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path == "/events" {
		ctx, cancel := context.WithCancel(req.Context())
		defer cancel()
		r.mu.Lock()
		r.streams = append(r.streams, cancel)
		r.mu.Unlock()
		req = req.WithContext(ctx)
	}
	if method, ok := strings.CutPrefix(req.URL.Path, "/api/"); ok && req.Method == http.MethodPost {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		var envelope struct {
			Payload map[string]any `json:"payload"`
		}
		_ = json.Unmarshal(body, &envelope)
		r.mu.Lock()
		held := r.delays[method]
		r.mu.Unlock()
		time.Sleep(held)
		r.mu.Lock()
		r.calls = append(r.calls, apiCall{Method: method, Payload: envelope.Payload})
		r.mu.Unlock()
	}
	r.next.ServeHTTP(w, req)
}

// dropStreams ends every open event stream, as a lost connection would.
func (r *apiRecorder) dropStreams() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cancel := range r.streams {
		cancel()
	}
	r.streams = nil
}

// count is the number of recorded calls of method whose payload has every
// key/value of want.
func (r *apiRecorder) count(method string, want map[string]any) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if c.Method == method && hasAll(c.Payload, want) {
			n++
		}
	}
	return n
}

func hasAll(payload, want map[string]any) bool {
	for k, v := range want {
		if fmt.Sprint(payload[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}
