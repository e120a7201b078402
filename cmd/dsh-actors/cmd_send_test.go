package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/session"
)

// sentStore is a store the runtime itself wrote: top-level agents "alpha"
// and "beta"; alpha's continuable child spawned a grandchild; beta has a
// child of its own. Every epoch settled before the runtime closed.
type sentStore struct {
	root                 string
	child, grand, sister string // alpha's child, its child, beta's child
}

func newSentStore(t *testing.T, choice storeChoice) sentStore {
	t.Helper()
	ctx := context.Background()
	s := sentStore{root: t.TempDir()}
	rt, err := openRuntime(s.root, dsh.Options{Logger: warnLogger(io.Discard)}, choice)
	require.NoError(t, err)
	var mu sync.Mutex
	ended := map[string]agent.ChildEnd{}
	allEnded := make(chan struct{})
	stop := rt.Subscribe(func(n dsh.Notice) {
		if n.Kind == dsh.ChildEnded {
			mu.Lock()
			defer mu.Unlock()
			if ended[n.SessionID] = n.End; len(ended) == 3 {
				close(allEnded)
			}
		}
	})
	defer stop()
	start := func(parentID string) *dsh.Handle {
		h, err := rt.StartAgent(ctx, parentID)
		require.NoError(t, err)
		return h
	}
	alpha, beta := start("alpha"), start("beta")
	startChild := func(p *dsh.Handle, label, prompt string) string {
		childID, err := rt.Spawn(ctx, p, label, event.Text(prompt))
		require.NoError(t, err)
		return childID
	}
	s.child = startChild(alpha, "researcher", "spawn reader: reply read it\nreply first")
	s.sister = startChild(beta, "reviewer", "reply approved")
	select {
	case <-allEnded:
	case <-time.After(time.Minute):
		t.Fatal("the three children of the sent store did not all end within a minute")
	}
	require.NoError(t, rt.Close())
	mu.Lock()
	defer mu.Unlock()
	for id := range ended {
		if id != s.child && id != s.sister {
			s.grand = id
		}
	}
	require.NotEmpty(t, s.grand)
	require.Equal(t, agent.Completed, ended[s.child].StopReason)
	return s
}

// readLog reads a session of the JSONL store at root (read-only).
func readLog(t *testing.T, root, id string) *session.Log {
	t.Helper()
	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	defer store.Close()
	log, err := store.Inspect(context.Background(), id)
	require.NoError(t, err)
	return log
}

// userMessage is the text of the logged user/message with id, and the
// index of that event.
func userMessage(t *testing.T, events []session.Event, id string) (string, int) {
	t.Helper()
	for i, e := range events {
		if e.Type != "user/message" {
			continue
		}
		var m struct {
			ID      string        `json:"id"`
			Content []event.Block `json:"content"`
			Source  event.Source  `json:"source"`
		}
		require.NoError(t, json.Unmarshal(e.Data, &m))
		if m.ID == id {
			require.Equal(t, event.Source{Kind: "user"}, m.Source)
			return textOf(m.Content), i
		}
	}
	t.Fatalf("no user/message %s in the log", id)
	return "", 0
}

var sentLine = regexp.MustCompile(`^sent (\S+) to (\S+)$`)

// The round trip: the parent is resumed, the settled child cold-resumed
// with the text as its next turn, its reply printed; the child's log holds
// the new turn under the printed id and the store stays listable.
func TestSendDeliversToAStoredChildAndPrintsItsReply(t *testing.T) {
	s := newSentStore(t, storeChoice{})
	before := len(readLog(t, s.root, s.child).Events)

	code, stdout, stderr := run(t, "send", "--store", s.root, "alpha", s.child, "reply hi")
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, 2, stdout)
	m := sentLine.FindStringSubmatch(lines[0])
	require.NotNil(t, m, stdout)
	require.Equal(t, s.child, m[2])
	require.Equal(t, s.child+" completed: hi", lines[1])

	events := readLog(t, s.root, s.child).Events
	text, at := userMessage(t, events, m[1])
	require.Equal(t, "reply hi", text)
	require.Greater(t, at, before-1)
	tail := make([]dsh.Event, 0, len(events)-at)
	for _, e := range events[at:] {
		tail = append(tail, dsh.Event(e))
	}
	require.Equal(t, []string{"hi"}, replies(tail))
	require.Equal(t, "turn/end", events[len(events)-1].Type)
	require.Contains(t, string(events[len(events)-1].Data), `"completed"`)

	code, listed, stderr := run(t, "list", "--store", s.root, "alpha")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, s.child+" [complete] \u2014 researcher\n", listed)

	// A second send is another cold resume of the same child.
	code, stdout, stderr = run(t, "send", "--store", s.root, "alpha", s.child, "reply again")
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasSuffix(stdout, s.child+" completed: again\n"), stdout)
}

// The direct parent of the grandchild is its only sender; a turn that
// fails is still the child's reply, with its stop reason.
func TestSendFromAChildToItsChildAndAFailedTurn(t *testing.T) {
	s := newSentStore(t, storeChoice{})
	code, stdout, stderr := run(t, "send", "--store", s.root, s.child, s.grand, "reply deeper")
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasSuffix(stdout, s.grand+" completed: deeper\n"), stdout)

	code, stdout, stderr = run(t, "send", "--store", s.root, "beta", s.sister, "fail no reason")
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasSuffix(stdout, "\n"+s.sister+" error (failed: no reason)\n"), stdout)

	code, stdout, stderr = run(t, "send", "--json", "--store", s.root, "beta", s.sister, "fail disk full")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, `"stopReason":"error","failure":{"message":"disk full"}}`)
}

func TestSendPrintsJSON(t *testing.T) {
	s := newSentStore(t, storeChoice{})
	code, stdout, stderr := run(t, "send", "--json", "--store", s.root, "beta", s.sister, "reply <ok> & done")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 1, strings.Count(stdout, "\n"), stdout)
	var got map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	var messageID string
	require.NoError(t, json.Unmarshal(got["messageId"], &messageID))
	want := fmt.Sprintf(`{"childId":%q,"messageId":%q,"stopReason":"completed",`+
		`"lastAssistantMessage":[{"type":"text","text":"<ok> & done"}]}`+"\n", s.sister, messageID)
	require.Equal(t, want, stdout)
	text, _ := userMessage(t, readLog(t, s.root, s.sister).Events, messageID)
	require.Equal(t, "reply <ok> & done", text)
}

// Every refusal is the runtime's or the Service's code, with nothing on
// stdout and the child's log untouched.
func TestSendFailuresNameTheCode(t *testing.T) {
	s := newSentStore(t, storeChoice{})
	for _, tc := range []struct {
		name          string
		parent, child string
		want          string
	}{
		{"unknown parent", "nobody", s.child,
			`dsh-actors send: AGENT_START_FAILED: actors: resume agent "nobody" failed: session "nobody" not found` + "\n"},
		{"another parent's child", "beta", s.child,
			fmt.Sprintf("dsh-actors send: UNAUTHORIZED: subagent %q belongs to another parent session\n", s.child)},
		{"a grandchild", "alpha", s.grand,
			fmt.Sprintf("dsh-actors send: UNAUTHORIZED: subagent %q belongs to another parent session\n", s.grand)},
		{"unknown child", "alpha", "nochild",
			`dsh-actors send: NOT_RESUMABLE: subagent "nochild" is unavailable: session "nochild" not found` + "\n"},
		{"a top-level session", "alpha", "beta",
			`dsh-actors send: UNAUTHORIZED: subagent "beta" belongs to another parent session` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := readLog(t, s.root, s.child).Events
			code, stdout, stderr := run(t, "send", "--store", s.root, tc.parent, tc.child, "reply no")
			require.Equal(t, 1, code)
			require.Empty(t, stdout)
			require.Equal(t, tc.want, stderr)
			require.Equal(t, before, readLog(t, s.root, s.child).Events)
		})
	}
}

// A child whose log is damaged in its committed region cannot be resumed.
func TestSendToACorruptChild(t *testing.T) {
	s := newSentStore(t, storeChoice{compression: "none"})
	path := logPath(t, s.root, s.sister)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := bytes.SplitAfter(raw, []byte("\n"))
	lines[2] = []byte("{not json\n")
	require.NoError(t, os.WriteFile(path, bytes.Join(lines, nil), 0o600))

	code, stdout, stderr := run(t, "send", "--store", s.root, "beta", s.sister, "reply no")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.True(t, strings.HasPrefix(stderr,
		fmt.Sprintf("dsh-actors send: NOT_RESUMABLE: subagent %q is unavailable: ", s.sister)), stderr)
}

// cancelOnStart cancels once the child's log holds the message named by
// the "sent" line written to it: the signal arrives while send waits for
// the reply, after the turn started (a message not yet claimed would be
// discarded by the drain, never logged). It waits testkit.WaitLimit at
// most, then cancels anyway and records that the message never came.
type cancelOnStart struct {
	bytes.Buffer
	log      string // the child's log file
	cancel   context.CancelFunc
	timedOut bool // the message was not logged within the limit
}

func (w *cancelOnStart) Write(p []byte) (int, error) {
	if m := sentLine.FindSubmatch(bytes.TrimSuffix(p, []byte("\n"))); m != nil {
		deadline := time.Now().Add(testkit.WaitLimit)
		for {
			if text, _ := plainText(w.log); strings.Contains(text, string(m[1])) {
				break
			}
			if time.Now().After(deadline) {
				w.timedOut = true
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		w.cancel()
	}
	return w.Buffer.Write(p)
}

// logPath is the file of one stored session.
func logPath(t *testing.T, root, id string) string {
	t.Helper()
	segment, err := logpath.EncodeSegment(id)
	require.NoError(t, err)
	paths, err := filepath.Glob(filepath.Join(root, "*", segment, "session.jsonl"))
	require.NoError(t, err)
	zstdPaths, err := filepath.Glob(filepath.Join(root, "*", segment, "session.jsonl.zstd"))
	require.NoError(t, err)
	paths = append(paths, zstdPaths...)
	require.Len(t, paths, 1)
	return paths[0]
}

// SIGINT while waiting drains the child (its turn ends aborted), flushes
// and fails with CANCELLED.
func TestSendCancelledWhileWaiting(t *testing.T) {
	s := newSentStore(t, storeChoice{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout := &cancelOnStart{log: logPath(t, s.root, s.sister), cancel: cancel}
	var stderr bytes.Buffer
	code := dispatch(ctx, []string{"send", "--store", s.root, "beta", s.sister, "sleep 1h"}, stdout, &stderr)
	require.False(t, stdout.timedOut, "waited %s for the child's log to hold the sent message", testkit.WaitLimit)
	require.Equal(t, 1, code)
	m := sentLine.FindStringSubmatch(strings.TrimSuffix(stdout.String(), "\n"))
	require.NotNil(t, m, stdout.String())
	require.Equal(t, fmt.Sprintf("dsh-actors send: CANCELLED: waiting for %s's reply to %s: context canceled\n",
		s.sister, m[1]), stderr.String())

	events := readLog(t, s.root, s.sister).Events
	_, at := userMessage(t, events, m[1])
	last := events[len(events)-1]
	require.Greater(t, len(events)-1, at)
	require.Equal(t, "turn/end", last.Type)
	require.Contains(t, string(last.Data), `"aborted"`)
}

func TestSendUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"send"}, "missing PARENT_ID, CHILD_ID and TEXT"},
		{[]string{"send", "p"}, "missing CHILD_ID and TEXT"},
		{[]string{"send", "p", "c"}, "missing TEXT"},
		{[]string{"send", "p", "c", ""}, "TEXT must not be empty"},
		{[]string{"send", "p", "c", "  \t\n"}, "TEXT must not be only whitespace"},
		{[]string{"send", "", "c", "t"}, "PARENT_ID must not be empty"},
		{[]string{"send", "p", "", "t"}, "CHILD_ID must not be empty"},
		{[]string{"send", "p", "c", "reply", "hi"}, `unexpected argument "hi" after TEXT`},
		{[]string{"send", "--bogus", "p", "c", "t"}, "flag provided but not defined: -bogus"},
		{[]string{"send", "--store", "", "p", "c", "t"}, `--store must name a folder, got ""`},
		{[]string{"send", "p", "c", "t", "--store"}, "flag needs an argument: -store"},
	} {
		code, stdout, stderr := run(t, tc.args...)
		require.Equal(t, 2, code, fmt.Sprint(tc.args))
		require.Empty(t, stdout)
		if tc.want != "" {
			require.Contains(t, stderr, "dsh-actors send: "+tc.want, tc.args)
		}
		require.Contains(t, stderr, sendUsage)
	}
}

// A store root that is a regular file is the persistence code, as for
// the other commands that run the runtime.
func TestSendOnAFileStoreRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(root, []byte("x\n"), 0o600))
	code, stdout, stderr := run(t, "send", "--store", root, "p", "c", "reply hi")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.True(t, strings.HasPrefix(stderr,
		"dsh-actors send: SESSION_QUERY_PERSISTENCE_FAILED: session persistence failed: open session root "), stderr)
}

// TestSendToAParentHeldElsewhereIsLeaseHeld: a parent another process
// holds live (serve, here a runtime of this process) cannot be resumed by
// send: it fails with LEASE_HELD, as documented, and writes nothing.
func TestSendToAParentHeldElsewhereIsLeaseHeld(t *testing.T) {
	ctx := context.Background()
	s := newSentStore(t, storeChoice{})
	holder, err := openRuntime(s.root, dsh.Options{Logger: warnLogger(io.Discard)}, storeChoice{})
	require.NoError(t, err)
	defer func() { require.NoError(t, holder.Close()) }()
	_, err = holder.ResumeAgent(ctx, "alpha")
	require.NoError(t, err)
	before := readLog(t, s.root, s.child).Events
	code, stdout, stderr := run(t, "send", "--store", s.root, "alpha", s.child, "reply no")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.True(t, strings.HasPrefix(stderr, "dsh-actors send: LEASE_HELD: "), stderr)
	require.Equal(t, before, readLog(t, s.root, s.child).Events)
}

// A child whose log holds an event of a type this build does not know,
// not marked ignorable, is refused by send (which appends nothing), by
// show (the query layer's persistence failure) and listed unavailable.
func TestSendRefusesALogWithAnUnknownEventType(t *testing.T) {
	s := newSentStore(t, storeChoice{compression: "none"})
	path := logPath(t, s.root, s.sister)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	seq := bytes.Count(raw, []byte("\n")) - 1
	raw = fmt.Appendf(raw, `{"type":"future/thing","seq":%d,"time":1,"data":{"x":1}}`+"\n", seq)
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	refusal := fmt.Sprintf(`session %q contains event type "future/thing" (seq %d) unknown to this harness and not marked ignorable; `+
		"refusing to interpret the log — it was likely written by a newer harness (raw log: %s)", s.sister, seq, path)

	code, stdout, stderr := run(t, "send", "--store", s.root, "beta", s.sister, "reply no")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, fmt.Sprintf("dsh-actors send: NOT_RESUMABLE: subagent %q is unavailable: %s\n", s.sister, refusal), stderr)
	code, _, stderr = run(t, "show", "--store", s.root, s.sister)
	require.Equal(t, 1, code)
	require.Equal(t, fmt.Sprintf("dsh-actors show: SESSION_QUERY_PERSISTENCE_FAILED: failed to inspect session %q: %s\n",
		s.sister, refusal), stderr)
	code, stdout, _ = run(t, "list", "--store", s.root, "beta")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, s.sister+" [diagnostic: unavailable]")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, raw, after, "nothing was appended")
}
