package query

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/storegen"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/session"
)

// storeQuery opens root and returns the query over it with no live
// sessions, as `dsh-actors list` builds it; seedCost selects the
// relisting store.
func storeQuery(tb testing.TB, root string, seedCost bool) *Query {
	jsonl, err := session.OpenJSONL(root)
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, jsonl.Close()) })
	var store session.Store = jsonl
	if seedCost {
		store = storetest.RelistingStore{Store: jsonl}
	}
	return New(session.NewSessions(store))
}

// generated writes a store of shape into a fresh folder removed at cleanup.
func generated(tb testing.TB, shape storegen.Shape) string {
	root, err := os.MkdirTemp("", "catalog-bench-")
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, os.RemoveAll(root)) })
	_, err = storegen.Generate(root, shape)
	require.NoError(tb, err)
	return root
}

// BenchmarkListChildren lists D children among C stored sessions with
// ~50-event logs (one trace, then per child a ListEvents and an exact
// readEvent, each one direct Inspect). The page cache is warm.
//
//	go test ./query -run '^$' -bench ListChildren -benchtime 5x
func BenchmarkListChildren(b *testing.B) {
	for _, c := range []int{1000, 10000} {
		for _, d := range []int{10, 100, 1000} {
			benchmarkListing(b, storegen.Shape{Sessions: c, Children: d, Turns: 5}, false)
		}
	}
	benchmarkListing(b, referenceShape, false)
}

// referenceShape is the reference store: C = 2,000 sessions
// (~24 MB) with D = 200 children.
var referenceShape = storegen.Shape{Sessions: 2000, Children: 200, Turns: 5}

// BenchmarkListChildrenSeedCost measures the same listing over a store
// that re-lists everything before each read, the original's O(D×C) cost,
// on the smaller shapes and the reference store (the large shapes take
// minutes per operation).
//
//	go test ./query -run '^$' -bench ListChildrenSeedCost -benchtime 1x
func BenchmarkListChildrenSeedCost(b *testing.B) {
	for _, shape := range []storegen.Shape{{Sessions: 1000, Children: 10, Turns: 5}, {Sessions: 1000, Children: 100, Turns: 5},
		{Sessions: 10000, Children: 10, Turns: 5}, referenceShape} {
		benchmarkListing(b, shape, true)
	}
}

func benchmarkListing(b *testing.B, shape storegen.Shape, seedCost bool) {
	root := generated(b, shape)
	q := storeQuery(b, root, seedCost)
	b.Run(fmt.Sprintf("C=%d/D=%d", shape.Sessions, shape.Children), func(b *testing.B) {
		for b.Loop() {
			entries, err := ListChildren(context.Background(), q, storegen.Parent)
			if err != nil || len(entries) != shape.Children {
				b.Fatalf("listed %d entries, err %v", len(entries), err)
			}
		}
	})
}

// TestDirectLookupMatchesTheSeedAlgorithm lists the same store, including
// a child that vanished after the trace and a damaged one, through the
// direct-lookup query and through the relisting one: identical entries.
func TestDirectLookupMatchesTheSeedAlgorithm(t *testing.T) {
	root := generated(t, storegen.Shape{Sessions: 120, Children: 30, Turns: 1})
	damageCommittedRegion(t, root, storegen.ChildID(3))
	vanishing := filepath.Dir(logPath(t, root, storegen.ChildID(7)))
	aside := filepath.Join(t.TempDir(), "aside")
	list := func(seedCost bool) []Entry {
		fq := &faultQuerier{inner: storeQuery(t, root, seedCost)}
		fq.onTrace = func(_ context.Context, _ string, next func() (*lineage, error)) (*lineage, error) {
			trace, err := next()
			require.NoError(t, os.Rename(vanishing, aside))
			return trace, err
		}
		entries, err := ListChildren(context.Background(), fq, storegen.Parent)
		require.NoError(t, err)
		require.NoError(t, os.Rename(aside, vanishing))
		return entries
	}
	direct, seed := list(false), list(true)
	require.Equal(t, seed, direct)
	require.Len(t, direct, 30)
	require.Contains(t, direct, diag(storegen.ChildID(3), reasonUnavailable))
	require.Contains(t, direct, diag(storegen.ChildID(7), reasonUnavailable))
	require.Contains(t, direct, child(storegen.ChildID(8), "child task 8", StatusComplete))
}
