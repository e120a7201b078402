package dsh_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
)

// fromUser is the source of a message a person typed.
var fromUser = event.Source{Kind: event.SourceUser}

// appendedTo calls seen with the type of every event appended to session
// id's log until the returned cancel is called.
func appendedTo(rt *dsh.Runtime, id string, seen func(eventType string)) (cancel func()) {
	return rt.Subscribe(func(n dsh.Notice) {
		if n.Kind == dsh.SessionAppended && n.SessionID == id {
			seen(n.Event.Type)
		}
	})
}

// OpenSession makes a top-level session live in a working folder and
// PromptSession gives it a message, answering at acceptance; Agent's
// handle waits for the turn. After a restart, PromptSession resumes the
// stored session by itself. The scripted agent answers "reply X" with X.
func ExampleRuntime_PromptSession() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-prompt-*")
	defer os.RemoveAll(dir)
	work := filepath.Join(dir, "work")

	rt, _ := dsh.Open(dsh.Options{Dir: filepath.Join(dir, "sessions")})
	if err := rt.OpenSession(ctx, dsh.SessionSpec{ID: "chat", Cwd: work}); err != nil {
		fmt.Println(err)
		return
	}
	_, _ = rt.PromptSession(ctx, "chat", event.Text("reply hello"), fromUser)
	a, _ := rt.Agent("chat")
	_ = a.WhenIdle(ctx)
	reply, _ := a.LastReply()
	fmt.Println(reply)
	_ = rt.Close()

	rt, _ = dsh.Open(dsh.Options{Dir: filepath.Join(dir, "sessions")}) // the restart
	defer rt.Close()
	if _, err := rt.PromptSession(ctx, "chat", event.Text("reply again"), fromUser); err != nil {
		fmt.Println(err)
		return
	}
	a, _ = rt.Agent("chat")
	_ = a.WhenIdle(ctx)
	reply, _ = a.LastReply()
	fmt.Println(reply)
	// Output:
	// hello
	// again
}

// Subscribe reports every change of the live sessions as it happens: here
// the events one turn appends to its session's log, in log order.
func ExampleRuntime_Subscribe() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-subscribe-*")
	defer os.RemoveAll(dir)
	rt, _ := dsh.Open(dsh.Options{Dir: dir})
	defer rt.Close()

	types := make(chan string, 16)
	cancel := appendedTo(rt, "chat", func(eventType string) { types <- eventType })
	defer cancel()
	_ = rt.OpenSession(ctx, dsh.SessionSpec{ID: "chat", Cwd: dir})
	_, _ = rt.PromptSession(ctx, "chat", event.Text("reply hi"), fromUser)
	for {
		select {
		case t := <-types:
			fmt.Println(t)
			if t == "turn/end" {
				return
			}
		case <-time.After(10 * time.Second):
			fmt.Println("no turn/end within 10s")
			return
		}
	}
	// Output:
	// turn/start
	// user/message
	// step/start
	// assistant/message
	// step/end
	// turn/end
}

// CancelTurn stops a session's running turn without waiting for it: the
// turn ends aborted and the agent stays live for the next message.
func ExampleRuntime_CancelTurn() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-cancel-*")
	defer os.RemoveAll(dir)
	rt, _ := dsh.Open(dsh.Options{Dir: dir})
	defer rt.Close()

	started := make(chan struct{}, 1)
	cancel := appendedTo(rt, "slow", func(eventType string) {
		if eventType == "turn/start" {
			started <- struct{}{}
		}
	})
	defer cancel()
	_ = rt.OpenSession(ctx, dsh.SessionSpec{ID: "slow", Cwd: dir})
	_, _ = rt.PromptSession(ctx, "slow", event.Text("sleep 1h"), fromUser)
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		fmt.Println("no turn/start within 10s")
		return
	}
	if err := rt.CancelTurn(ctx, "slow", false); err != nil {
		fmt.Println(err)
		return
	}
	a, _ := rt.Agent("slow")
	_ = a.WhenIdle(ctx)
	h, _ := rt.History(ctx, "slow")
	end, _ := h.Events[len(h.Events)-1].Summary()
	fmt.Println(end)
	// Output: turn 1 aborted
}

// SendFrom is Send with the message's source: the child's log keeps who
// sent each message.
func ExampleRuntime_SendFrom() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-sendfrom-*")
	defer os.RemoveAll(dir)
	rt, _ := dsh.Open(dsh.Options{Dir: dir})
	defer rt.Close()

	p, _ := rt.StartAgent(ctx, "parent")
	child, _ := rt.Spawn(ctx, p, "worker", event.Text("reply first"))
	_, _, _ = rt.WaitChild(ctx, child)
	coordinator := event.Source{Kind: event.SourceCoordinator}
	if _, err := rt.SendFrom(ctx, p, child, event.Text("reply second"), coordinator); err != nil {
		fmt.Println(err)
		return
	}
	_, _, _ = rt.WaitChild(ctx, child)
	h, _ := rt.History(ctx, child)
	for _, e := range h.Events {
		var message struct{ Source event.Source }
		if e.Type == "user/message" && json.Unmarshal(e.Data, &message) == nil {
			text, _ := e.Summary()
			fmt.Println(message.Source.Kind+":", text)
		}
	}
	// Output:
	// user: reply first
	// coordinator: reply second
}

// Delegate runs one one-shot child through a provider and returns its end
// once the child is disposed; "spawn" starts it with only the prompt.
func ExampleRuntime_Delegate() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-delegate-*")
	defer os.RemoveAll(dir)
	rt, _ := dsh.Open(dsh.Options{Dir: dir})
	defer rt.Close()

	p, _ := rt.StartAgent(ctx, "parent")
	end, err := rt.Delegate(ctx, p, "spawn", event.Text("reply done"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(end.StopReason, end.LastAssistantText())
	// Output: completed done
}

// Subscribe also reports each epoch of a continuable child: its start,
// with its parent, provider and label, and its end, with its stop reason
// and last reply.
func ExampleRuntime_Subscribe_children() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-children-*")
	defer os.RemoveAll(dir)
	rt, _ := dsh.Open(dsh.Options{Dir: dir})
	defer rt.Close()

	edges := make(chan string, 4)
	cancel := rt.Subscribe(func(n dsh.Notice) {
		switch n.Kind {
		case dsh.ChildStarted:
			edges <- fmt.Sprintf("started %s (%s) of %s", n.Label, n.Provider, n.ParentSessionID)
		case dsh.ChildEnded:
			edges <- fmt.Sprintf("ended %s: %q", n.End.StopReason, n.End.LastAssistantText())
		}
	})
	defer cancel()
	p, _ := rt.StartAgent(ctx, "lead")
	if _, err := rt.Spawn(ctx, p, "scout", event.Text("reply found it")); err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		select {
		case edge := <-edges:
			fmt.Println(edge)
		case <-time.After(30 * time.Second):
			fmt.Println("no child notice within 30s")
			return
		}
	}
	// Output:
	// started scout (spawn) of lead
	// ended completed: "found it"
}

// Release frees a live session's agent (its children first) and keeps the
// session stored; the next PromptSession picks it up again.
func ExampleRuntime_Release() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-release-*")
	defer os.RemoveAll(dir)

	rt, _ := dsh.Open(dsh.Options{Dir: dir})
	defer rt.Close()
	_ = rt.OpenSession(ctx, dsh.SessionSpec{ID: "idle", Cwd: filepath.Join(dir, "work")})
	if err := rt.Release(ctx, "idle"); err != nil {
		fmt.Println(err)
		return
	}
	_, live := rt.Agent("idle")
	fmt.Println("live after Release:", live)
	_, _ = rt.PromptSession(ctx, "idle", event.Text("reply back"), fromUser)
	a, _ := rt.Agent("idle")
	_ = a.WhenIdle(ctx)
	reply, _ := a.LastReply()
	fmt.Println(reply)
	// Output:
	// live after Release: false
	// back
}
