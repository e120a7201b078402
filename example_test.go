package dsh_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	dsh "github.com/dsh-actors/dsh-actors"
)

// Open a runtime over a JSONL folder with a custom agent (a text-in,
// text-out function), start an agent, give it one turn and read what it
// logged.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-example-*")
	defer os.RemoveAll(dir)

	shout := dsh.TextAgent(func(_ context.Context, prompt string) (string, error) {
		return strings.ToUpper(prompt), nil
	})
	rt, err := dsh.Open(dsh.Options{Dir: dir, NewAgent: shout})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()

	a, _ := rt.StartAgent(ctx, "hello")
	_, _ = rt.Prompt(ctx, "hello", "hello, world")
	_ = a.WhenIdle(ctx)
	reply, _ := a.LastReply()
	fmt.Println(reply)
	// Output: HELLO, WORLD
}
