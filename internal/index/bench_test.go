package index

import (
	"context"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/storegen"
	"github.com/dsh-actors/dsh-actors/query"
)

// BenchmarkListChildren: a warm indexed listing against the unindexed
// reader on the same generated store.
func BenchmarkListChildren(b *testing.B) {
	f := newFixtureTB(b, storegen.Shape{Sessions: 2_000, Children: 200, Turns: 5})
	db := f.open()
	ctx := context.Background()
	b.Run("indexed", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.ListChildren(ctx, storegen.Parent); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unindexed", func(b *testing.B) {
		q := query.New(f.sessions)
		for b.Loop() {
			if _, err := query.ListChildren(ctx, q, storegen.Parent); err != nil {
				b.Fatal(err)
			}
		}
	})
}
