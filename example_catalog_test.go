package dsh_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
)

// History reads a session's log as events, whether it is live or only
// stored, without resuming it.
func ExampleRuntime_History() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-history-*")
	defer os.RemoveAll(dir)

	rt, _ := dsh.Open(dsh.Options{Dir: dir})
	a, _ := rt.StartAgent(ctx, "notes")
	_, _ = rt.Prompt(ctx, "notes", "reply noted")
	_ = a.WhenIdle(ctx)
	_ = rt.Close()

	rt, _ = dsh.Open(dsh.Options{Dir: dir}) // "notes" is only stored now
	defer rt.Close()
	h, err := rt.History(ctx, "notes")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(h.Header.ID)
	for _, e := range h.Events {
		fmt.Println(e.Seq, e.Type)
	}
	// Output:
	// notes
	// 0 turn/start
	// 1 user/message
	// 2 step/start
	// 3 assistant/message
	// 4 step/end
	// 5 turn/end
}

// Sessions lists the live sessions, then the stored ones, each with its
// title (the first line of its first user message).
func ExampleRuntime_Sessions() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-sessions-*")
	defer os.RemoveAll(dir)

	ok := dsh.TextAgent(func(context.Context, string) (string, error) { return "ok", nil })
	rt, _ := dsh.Open(dsh.Options{Dir: dir, NewAgent: ok})
	a, _ := rt.StartAgent(ctx, "stored")
	_, _ = rt.Prompt(ctx, "stored", "plan the trip\nwith details")
	_ = a.WhenIdle(ctx)
	_ = rt.Close()

	rt, _ = dsh.Open(dsh.Options{Dir: dir, NewAgent: ok})
	defer rt.Close()
	_, _ = rt.StartAgent(ctx, "live")
	sessions, _ := rt.Sessions(ctx)
	for _, s := range sessions {
		fmt.Printf("%s live=%v title=%q asOf=%d\n", s.Header.ID, s.Live, s.Title, s.TitleAsOfSeq)
	}
	// Output:
	// live live=true title="" asOf=-1
	// stored live=false title="plan the trip" asOf=5
}

// LiveSessions lists the sessions live now without reading the store:
// whether each runs a turn, and how its last turn ended.
func ExampleRuntime_LiveSessions() {
	ctx := context.Background()
	failing := dsh.TextAgent(func(context.Context, string) (string, error) { return "", errors.New("upstream down") })
	rt, _ := dsh.Open(dsh.Options{NewAgent: failing})
	defer rt.Close()
	a, _ := rt.StartAgent(ctx, "ask")
	_, _ = rt.Prompt(ctx, "ask", "hello")
	_ = a.WhenIdle(ctx)
	for _, s := range rt.LiveSessions() {
		var end struct {
			Reason struct {
				Kind string `json:"kind"`
			} `json:"reason"`
		}
		_ = json.Unmarshal(s.LastTurnEnd, &end)
		fmt.Printf("%s running=%v last turn: %s\n", s.Header.ID, s.Running, end.Reason.Kind)
	}
	// Output:
	// ask running=false last turn: error
}

// Search finds the events of stored sessions holding a phrase; a limit out
// of range is refused with a code.
func ExampleRuntime_Search() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-search-*")
	defer os.RemoveAll(dir)

	rt, _ := dsh.Open(dsh.Options{Dir: dir})
	a, _ := rt.StartAgent(ctx, "trip")
	_, _ = rt.Prompt(ctx, "trip", "reply the Blue Lagoon opens at nine")
	_ = a.WhenIdle(ctx)
	_ = rt.Close()

	rt, _ = dsh.Open(dsh.Options{Dir: dir})
	defer rt.Close()
	page, _ := rt.Search(ctx, dsh.SearchRequest{Phrase: "blue lagoon"})
	for _, h := range page.Hits {
		fmt.Println(h.SessionID, h.Seq, h.Type, h.Snippet)
	}
	_, err := rt.Search(ctx, dsh.SearchRequest{Phrase: "blue", Limit: dsh.SearchMaxLimit + 1})
	fmt.Println(errors.Is(err, fault.QueryInvalidLimit))
	// Output:
	// trip 3 assistant/message the Blue Lagoon opens at nine
	// trip 1 user/message reply the Blue Lagoon opens at nine
	// true
}

// RenderChildren renders a parent's catalog as the model's list_agents
// tool shows it.
func ExampleRenderChildren() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-render-*")
	defer os.RemoveAll(dir)

	rt, _ := dsh.Open(dsh.Options{Dir: dir})
	defer rt.Close()
	p, _ := rt.StartAgent(ctx, "parent")
	fmt.Println(dsh.RenderChildren(nil))
	child, _ := rt.Spawn(ctx, p, "researcher", event.Text("sleep 1m")) // running until Close
	children, _ := rt.Children(ctx, "parent")
	fmt.Println(strings.Replace(dsh.RenderChildren(children), child, "CHILD", 1))
	// Output:
	// (no subagents)
	// CHILD [running] — researcher
}

// A log damaged in its middle fails History with an error naming the file
// and line; ReadablePrefix gives the events before the damage.
func ExampleReadablePrefix() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-damaged-*")
	defer os.RemoveAll(dir)

	rt, _ := dsh.Open(dsh.Options{Dir: dir, Compression: "none"}) // plain JSONL lines
	a, _ := rt.StartAgent(ctx, "notes")
	_, _ = rt.Prompt(ctx, "notes", "reply noted")
	_ = a.WhenIdle(ctx)
	_ = rt.Close()

	logs, _ := filepath.Glob(filepath.Join(dir, "*", "notes", "*.jsonl"))
	if len(logs) != 1 {
		fmt.Println("logs:", logs)
		return
	}
	raw, _ := os.ReadFile(logs[0])
	lines := strings.Split(string(raw), "\n")
	lines[3] = `{"type":"step/start",` // the third event line, cut
	_ = os.WriteFile(logs[0], []byte(strings.Join(lines, "\n")), 0o600)

	rt, _ = dsh.Open(dsh.Options{Dir: dir})
	defer rt.Close()
	_, err := rt.History(ctx, "notes")
	fmt.Println(errors.Is(err, fault.QueryPersistenceFailed))
	events, line, ok := dsh.ReadablePrefix(err)
	fmt.Println(ok, "damage at event line", line)
	for _, e := range events {
		fmt.Println(e.Seq, e.Type)
	}
	// Output:
	// true
	// true damage at event line 3
	// 0 turn/start
	// 1 user/message
}
