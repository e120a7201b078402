package bench

import (
	"context"
	"testing"
)

// BenchmarkSettle is one round of row 5's settle line: Spawn of a `reply`
// child until its epoch ended, without fsync (profile it with
// -cpuprofile).
func BenchmarkSettle(b *testing.B) {
	ctx := context.Background()
	w, err := OpenWorld(ctx, b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := w.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}()
	for b.Loop() {
		id, err := w.Start(ctx, w.Parent, "reply done")
		if err == nil {
			err = w.WaitEnd(ctx, id)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkColdResume is row 5's cold resume of a 10,000-event log (the
// follow-up until accepted, the turn, and the untimed rewrite of the log
// all profiled together).
func BenchmarkColdResume(b *testing.B) {
	ctx := context.Background()
	root := b.TempDir()
	for b.Loop() {
		if _, err := ColdResume(ctx, root, 10_000, 5); err != nil {
			b.Fatal(err)
		}
	}
}
