package host

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// gatedLister is a ListChildren whose calls block until released, each
// answering with its call number as the single entry's label.
type gatedLister struct {
	calls    atomic.Int64
	release  chan struct{}
	canceled atomic.Int64
}

func (g *gatedLister) list(ctx context.Context, parentID string) ([]catalogEntry, error) {
	n := g.calls.Add(1)
	select {
	case <-g.release:
		return []catalogEntry{{Kind: kindChild, ID: parentID, Label: string(rune('0' + n))}}, nil
	case <-ctx.Done():
		g.canceled.Add(1)
		return nil, ctx.Err()
	}
}

func TestCatalogReadsJoinTheNextReadNeverARunningOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gatedLister{release: make(chan struct{})}
		reads := newCatalogReads(g.list)
		labels := make(chan string, 11)
		readOnce := func() {
			entries, err := reads.read(context.Background(), "p")
			require.NoError(t, err)
			labels <- entries[0].Label
		}
		go readOnce()
		synctest.Wait() // read 1 is running
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(readOnce)
		}
		synctest.Wait() // ten callers gathered behind it
		require.Equal(t, int64(1), g.calls.Load())

		g.release <- struct{}{}
		require.Equal(t, "1", <-labels)
		synctest.Wait() // read 2 started for the ten
		require.Equal(t, int64(2), g.calls.Load())
		g.release <- struct{}{}
		wg.Wait()
		for range 10 {
			require.Equal(t, "2", <-labels)
		}
		require.Equal(t, int64(2), g.calls.Load())
	})
}

func TestCatalogReadsCancelWithTheirLastCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gatedLister{release: make(chan struct{})}
		reads := newCatalogReads(g.list)
		first, cancelFirst := context.WithCancel(context.Background())
		second, cancelSecond := context.WithCancel(context.Background())
		errs := make(chan error, 2)
		go func() { _, err := reads.read(first, "p"); errs <- err }()
		synctest.Wait()
		go func() { _, err := reads.read(second, "p"); errs <- err }()
		synctest.Wait()

		cancelSecond() // the gathered read loses its only caller: it never starts
		require.ErrorIs(t, <-errs, context.Canceled)
		cancelFirst() // the running read loses its only caller: it is cancelled
		require.ErrorIs(t, <-errs, context.Canceled)
		synctest.Wait()
		require.Equal(t, int64(1), g.calls.Load())
		require.Equal(t, int64(1), g.canceled.Load())

		_, err := reads.read(first, "p")
		require.ErrorIs(t, err, context.Canceled, "a done request never starts a read")
		require.Equal(t, int64(1), g.calls.Load())
	})
}
