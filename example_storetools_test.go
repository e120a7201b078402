package dsh_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	dsh "github.com/dsh-actors/dsh-actors"
)

// Check reads a store without writing to it and names what is wrong: here
// a session folder left empty.
func ExampleCheck() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-check-*")
	defer os.RemoveAll(dir)

	rt, _ := dsh.Open(dsh.Options{Dir: dir})
	_, _ = rt.StartAgent(ctx, "kept")
	_ = rt.Close()
	found, _ := dsh.Check(ctx, dir)
	fmt.Println(len(found), "problems")

	_ = os.MkdirAll(filepath.Join(dir, "_no-cwd", "gone"), 0o700)
	found, _ = dsh.Check(ctx, dir)
	for _, d := range found {
		fmt.Println(d.Kind, filepath.Base(d.Path))
	}
	// Output:
	// 0 problems
	// empty-folder gone
}
