package subagent_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/session"

	"github.com/dsh-actors/dsh-actors/subagent"
)

// A parent starts a continuable child, the child settles, a follow-up
// cold-resumes it, and the catalog lists it — all with the keyless
// scripted agent over a JSONL store.
func Example_continuable() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "subagent-example-*")
	defer os.RemoveAll(root)
	rt, svc, closeRuntime, _ := openService(root)
	defer closeRuntime()
	ends := make(chan *subagent.EndEvent, 4)
	svc.Subscribe(func(ev subagent.Event) {
		if end, ok := ev.(*subagent.EndEvent); ok {
			ends <- end
		}
	})
	p, _ := rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "parent"}})

	started, err := svc.StartContinuable(ctx, manager.StartSpec{
		Provider: subagent.SpawnName, Label: "summarize the doc",
		Request: manager.Request{Prompt: event.Text("reply three sources found"), Parent: p},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	end := <-ends // the child settled: its epoch ended and it was disposed
	fmt.Println(end.StopReason, end.LastAssistantMessage[0].Text)

	_, _ = svc.Followup(ctx, p, started.ChildID, event.Text("reply summary written"), event.Source{Kind: "user"})
	end = <-ends // a second epoch, cold-resumed from the log
	fmt.Println(end.StopReason, end.LastAssistantMessage[0].Text)

	entries, _ := svc.ListChildren(ctx, "parent")
	fmt.Println(entries[0].Status, entries[0].Label)
	// Output:
	// completed three sources found
	// completed summary written
	// complete summarize the doc
}

// A one-shot delegation: the caller owns the run and disposes it.
func ExampleService_Start() {
	ctx := context.Background()
	rt, svc, closeRuntime, _ := openService("") // memory-only sessions
	defer closeRuntime()
	p, _ := rt.StartAgent(ctx, parent.CreateSpec{})

	run, err := svc.Start(ctx, subagent.SpawnName, subagent.StartRequest{Prompt: event.Text("reply done"), Parent: p})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer run.Dispose(ctx)
	result, _ := run.Result(ctx)
	fmt.Println(result.StopReason, result.Output[0].Text)
	// Output: completed done
}

// Continuable children need session persistence.
func ExampleService_StartContinuable_persistence() {
	ctx := context.Background()
	rt, svc, closeRuntime, _ := openService("") // memory-only sessions
	defer closeRuntime()
	p, _ := rt.StartAgent(ctx, parent.CreateSpec{})
	_, err := svc.StartContinuable(ctx, manager.StartSpec{Provider: subagent.SpawnName, Label: "x",
		Request: manager.Request{Prompt: event.Text("hi"), Parent: p}})
	var typed *fault.Error
	fmt.Println(errors.As(err, &typed), typed.Code)
	// Output: true PERSISTENCE_UNAVAILABLE
}
