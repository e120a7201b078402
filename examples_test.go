package dsh_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
)

// A continuable child outlives its runtime: Shutdown lets its first turn
// finish, a new runtime over the same folder resumes the parent, and a
// Send cold-resumes the child from its log for its next turn. The scripted
// agent answers "reply X" with X.
func ExampleRuntime_Send_restart() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-restart-*")
	defer os.RemoveAll(dir)

	rt, _ := dsh.Open(dsh.Options{Dir: dir})
	p, _ := rt.StartAgent(ctx, "parent")
	child, _ := rt.Spawn(ctx, p, "researcher", event.Text("reply three sources found"))
	_ = rt.Shutdown(ctx) // the accepted first turn runs to its end, then all is flushed

	rt, _ = dsh.Open(dsh.Options{Dir: dir}) // the restart
	defer rt.Close()
	p, _ = rt.ResumeAgent(ctx, "parent")
	if _, err := rt.Send(ctx, p, child, event.Text("reply summary written")); err != nil {
		fmt.Println(err)
		return
	}
	end, _, _ := rt.WaitChild(ctx, child) // the cold-resumed epoch settled
	fmt.Println(end.StopReason, end.LastAssistantText())
	children, _ := rt.Children(ctx, "parent")
	fmt.Println(children[0].Label, children[0].Status)
	// Output:
	// completed summary written
	// researcher complete
}

// A scoped drain stops one parent's children child-first and closes
// admission below it; another parent's child keeps running.
func ExampleRuntime_Drain() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-drain-*")
	defer os.RemoveAll(dir)
	rt, _ := dsh.Open(dsh.Options{Dir: dir})
	defer rt.Close()

	a, _ := rt.StartAgent(ctx, "a")
	b, _ := rt.StartAgent(ctx, "b")
	stopped, _ := rt.Spawn(ctx, a, "long job", event.Text("sleep 1h"))
	running, _ := rt.Spawn(ctx, b, "other job", event.Text("sleep 1h"))

	if err := rt.Drain(ctx, a); err != nil {
		fmt.Println(err)
		return
	}
	_, err := rt.Send(ctx, a, stopped, event.Text("reply again"))
	fmt.Println("below a:", fault.CodeOf(err))
	_, err = rt.Send(ctx, b, running, event.Text("reply later"))
	fmt.Println("below b:", err)
	// Output:
	// below a: DRAINING
	// below b: <nil>
}

// Every error a layer returns on purpose carries a fault.Code: match it
// with errors.Is whichever layer returned it, or read it with
// fault.CodeOf.
func Example_errorCodes() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-errors-*")
	defer os.RemoveAll(dir)
	rt, _ := dsh.Open(dsh.Options{Dir: dir})

	a, _ := rt.StartAgent(ctx, "a")
	stranger, _ := rt.StartAgent(ctx, "stranger")
	child, _ := rt.Spawn(ctx, a, "worker", event.Text("sleep 1h"))

	// Only the child's exact live direct parent may send to it.
	_, err := rt.Send(ctx, stranger, child, event.Text("reply hi"))
	fmt.Println(errors.Is(err, fault.Unauthorized), fault.CodeOf(err))

	// A cancelled caller is CANCELLED, and still a context.Canceled.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = rt.Send(cancelled, a, child, event.Text("reply hi"))
	fmt.Println(errors.Is(err, fault.Cancelled), errors.Is(err, context.Canceled))

	// Once shutdown began, every layer answers RUNTIME_CLOSED.
	_ = rt.Close()
	_, err = rt.StartAgent(ctx, "late")
	fmt.Println(fault.CodeOf(err))
	_, err = rt.Send(ctx, a, child, event.Text("reply hi"))
	fmt.Println(errors.Is(err, fault.Closed))
	// Output:
	// true UNAUTHORIZED
	// true true
	// RUNTIME_CLOSED
	// true
}

// An agent with the full contract: agent.Func gets the turn's Host, so it
// can log steps, read its conversation and start continuable children.
// This one answers in capitals.
func Example_agentFunc() {
	ctx := context.Background()
	shout := func(agent.Options) agent.Agent {
		return agent.Func(func(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
			return agent.Completed, host.Say(ctx, event.Text(strings.ToUpper(event.TextOf(msg.Content))))
		})
	}
	rt, _ := dsh.Open(dsh.Options{NewAgent: shout}) // memory-only sessions
	defer rt.Close()

	a, _ := rt.StartAgent(ctx, "hello")
	_, _ = rt.Prompt(ctx, a.ID(), "hello, world")
	_ = a.WhenIdle(ctx)
	conversation, _ := a.Conversation()
	for _, e := range conversation {
		fmt.Println(e.Role+":", event.TextOf(e.Content))
	}
	// Output:
	// user: hello, world
	// assistant: HELLO, WORLD
}

// The embedding section of the README as it runs: OpenAgent starts the
// parent (or resumes it when stored), WaitChild blocks until the child's
// epoch ends, Children lists the catalog without waking the child, and a
// Send to an id that names no child is NOT_RESUMABLE.
func ExampleRuntime_WaitChild() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-wait-*")
	defer os.RemoveAll(dir)
	rt, _ := dsh.Open(dsh.Options{Dir: dir})
	defer rt.Close()

	p, _ := rt.OpenAgent(ctx, "parent")
	child, _ := rt.Spawn(ctx, p, "worker", event.Text("reply hi"))
	end, ok, _ := rt.WaitChild(ctx, child)
	fmt.Println(ok, end.StopReason, end.LastAssistantText())
	children, _ := rt.Children(ctx, "parent")
	fmt.Println(len(children), children[0].Label)
	_, err := rt.Send(ctx, p, "nobody", event.Text("reply hi"))
	fmt.Println(errors.Is(err, fault.NotResumable))
	// Output:
	// true completed hi
	// 1 worker
	// true
}
