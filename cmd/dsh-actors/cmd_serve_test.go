package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/index"
)

// serveRPC posts one client-request to the stack's handler and returns
// its result's value (failing the test on an error result).
func serveRPC(t *testing.T, stack *serveStack, method, payload string) json.RawMessage {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/api/"+method,
		strings.NewReader(`{"type":"client-request","rpcId":"r","method":"`+method+`","payload":`+payload+`}`))
	req.RemoteAddr = "127.0.0.1:50000" // a page on this machine
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	stack.handler.ServeHTTP(rec, req)
	var resp struct {
		Result struct {
			OK    bool            `json:"ok"`
			Value json.RawMessage `json:"value"`
			Error json.RawMessage `json:"error"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp), rec.Body.String())
	require.True(t, resp.Result.OK, "%s: %s", method, resp.Result.Error)
	return resp.Result.Value
}

func openTestStack(t *testing.T, root string, indexed bool) *serveStack {
	t.Helper()
	stack, err := openServeStack(serveFlags{store: root, indexed: indexed}, warnLogger(io.Discard), nil, nil)
	require.NoError(t, err)
	return stack
}

// TestServeTitlesStoredSessionsAfterARestart: a serve stack restarted
// over a store with conversations lists them with their titles (indexed,
// and with --no-index, which keeps no index file) and finds their words
// through session.search alike.
func TestServeTitlesStoredSessionsAfterARestart(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	stack := openTestStack(t, root, true)
	for _, text := range []string{"reply 你好 from the first", "reply the second one\nreply more"} {
		var created struct{ SessionID string }
		require.NoError(t, json.Unmarshal(serveRPC(t, stack, "session.create", `{}`), &created))
		serveRPC(t, stack, "session.prompt", `{"sessionId":"`+created.SessionID+`","mode":"queue","content":[{"type":"text","text":`+jsonText(text)+`}]}`)
		h, ok := stack.rt.Agent(created.SessionID)
		require.True(t, ok, "%s is live", created.SessionID)
		require.NoError(t, h.WhenIdle(context.Background()))
	}
	require.NoError(t, stack.shutdown(&http.Server{}))

	var answers []string
	for _, indexed := range []bool{true, false} {
		require.NoError(t, os.RemoveAll(filepath.Join(root, index.FileName)))
		stack := openTestStack(t, root, indexed)
		var list struct {
			Items []struct {
				Projections struct {
					Values struct{ Title string }
				}
			}
		}
		require.NoError(t, json.Unmarshal(serveRPC(t, stack, "session.list", `{}`), &list))
		var titles []string
		for _, item := range list.Items {
			titles = append(titles, item.Projections.Values.Title)
		}
		require.ElementsMatch(t, []string{"reply 你好 from the first", "reply the second one"}, titles, "indexed %v", indexed)
		hits := serveRPC(t, stack, "session.search", `{"query":"SECOND one"}`)
		require.Contains(t, string(hits), `"snippet":"reply the second one reply more"`)
		answers = append(answers, string(hits))
		_, err := os.Stat(filepath.Join(root, index.FileName))
		require.Equal(t, indexed, err == nil, "only the indexed stack keeps %s (indexed %v)", index.FileName, indexed)
		require.NoError(t, stack.shutdown(&http.Server{}))
	}
	require.Equal(t, answers[0], answers[1])
}

func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestServeTakesNoIndex(t *testing.T) {
	for args, indexed := range map[string]bool{"": true, "--no-index": false} {
		parsed, status := parseServeFlags(strings.Fields("--store /tmp/x "+args), io.Discard)
		require.Equal(t, -1, status, args)
		require.Equal(t, indexed, parsed.indexed, args)
	}
}

// --durable-admission opens a JSONL store in its durable admission mode;
// without it the store admits in memory, and a Postgres store, which
// always admits durably, takes no store option from it.
func TestServeDurableAdmissionOpensTheJSONLInbox(t *testing.T) {
	for args, durableMode := range map[string]bool{"": false, "--durable-admission": true} {
		parsed, status := parseServeFlags(strings.Fields("--store "+t.TempDir()+" "+args), io.Discard)
		require.Equal(t, -1, status, args)
		require.Equal(t, storeChoice{durable: durableMode}, parsed.storeChoice, args)
	}
	parsed, status := parseServeFlags(strings.Fields("--store postgres://h/db --durable-admission"), io.Discard)
	require.Equal(t, -1, status)
	require.Equal(t, storeChoice{}, parsed.storeChoice)
}

// TestServeStartsWithoutAnIndexItCannotOpen: an index file serve cannot
// open (here a folder where the file belongs, as a full disk or a
// damaged file also makes it fail) never stops serve from serving the
// logs: it starts without the index, says so in its log naming the
// cause, and session.search reads the logs.
func TestServeStartsWithoutAnIndexItCannotOpen(t *testing.T) {
	root := testStore(t)
	path := filepath.Join(root, index.FileName)
	require.NoError(t, os.Mkdir(path, 0o700))
	var log bytes.Buffer
	stack, err := openServeStack(serveFlags{store: root, indexed: true}, warnLogger(&log), nil, nil)
	require.NoError(t, err, "serve starts")
	defer func() { require.NoError(t, stack.shutdown(&http.Server{})) }()
	require.Contains(t, log.String(), "level=WARN")
	require.Contains(t, log.String(), path, "the warning names the index file")
	hits := serveRPC(t, stack, "session.search", `{"query":"summarize the"}`)
	require.Contains(t, string(hits), `"sessionId":"child-a"`)
}

// serve naming the other encoding than the store's logs is refused at
// start, with the store's own message, before it listens: it used to
// serve a page on which every read and prompt failed.
func TestServeRefusesTheOtherCompressionAtStart(t *testing.T) {
	store := t.TempDir()
	writeRaw(t, store, "/work", "s", `{"type":"session","version":0,"id":"s","createdAt":1,"cwd":"/work","delegationDepth":0}`,
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`)
	code, stdout, stderr := runCancelled(t, "serve", "--store", store, "--compression", "zstd", "--addr", "127.0.0.1:0")
	require.Equal(t, 1, code, stderr)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "dsh-actors serve: SESSION_QUERY_PERSISTENCE_FAILED: session persistence failed: session artifact ")
	require.Contains(t, stderr, `uses .jsonl, but this backend is configured for compression "zstd"; use a separate root or select the matching compression mode`)
	require.NotContains(t, stderr, "serving")
}
