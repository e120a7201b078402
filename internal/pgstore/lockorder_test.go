package pgstore

import (
	"fmt"
	"sync"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// A renewal and a drain cut-off that lock the same sessions at once never
// deadlock: a node renewing the leases of many children while the
// parent's node closes admission below the parent (both statements lock
// every child's row) lock them in one order. Before they did, Postgres
// aborted one of the two as a deadlock within a few dozen rounds.
func TestARenewalAndADrainOfTheSameChildrenDoNotDeadlock(t *testing.T) {
	dsn := cluster.Database(t)
	renewer, drainer := openStore(t, dsn, WithOwner("renewer")), openStore(t, dsn, WithOwner("drainer"))
	require.NoError(t, drainer.Create(ctx, storetest.Header("p", ""), nil))
	parentEpoch, err := drainer.Acquire(ctx, "p")
	require.NoError(t, err)
	for i := range 40 {
		id := fmt.Sprintf("c%02d", i)
		require.NoError(t, drainer.Create(ctx, storetest.Header(id, "p"), nil))
		_, err := renewer.Acquire(ctx, id)
		require.NoError(t, err)
	}
	in, _ := session.InboxOf(drainer)
	for range 300 {
		var wg sync.WaitGroup
		var renewErr, drainErr error
		wg.Go(func() { _, renewErr = renewer.Renew(ctx) })
		wg.Go(func() { drainErr = in.CloseAdmission(ctx, "p", parentEpoch) })
		testkit.Wait(t, &wg, "the renewal and the drain cut-off")
		require.NoError(t, renewErr)
		require.NoError(t, drainErr)
	}
}

// A store's Close, which gives up every lease it holds in one statement,
// and a drain cut-off over the same sessions never deadlock either.
func TestACloseAndADrainOfTheSameChildrenDoNotDeadlock(t *testing.T) {
	dsn := cluster.Database(t)
	drainer := openStore(t, dsn, WithOwner("drainer"))
	require.NoError(t, drainer.Create(ctx, storetest.Header("p", ""), nil))
	parentEpoch, err := drainer.Acquire(ctx, "p")
	require.NoError(t, err)
	ids := make([]string, 40)
	for i := range ids {
		ids[i] = fmt.Sprintf("c%02d", i)
		require.NoError(t, drainer.Create(ctx, storetest.Header(ids[i], "p"), nil))
	}
	in, _ := session.InboxOf(drainer)
	for round := range 40 {
		closer := openStore(t, dsn, WithOwner(fmt.Sprintf("closer-%d", round)))
		for _, id := range ids {
			_, err := closer.Acquire(ctx, id)
			require.NoError(t, err)
		}
		var wg sync.WaitGroup
		var closeErr, drainErr error
		wg.Go(func() { closeErr = closer.Close() })
		wg.Go(func() { drainErr = in.CloseAdmission(ctx, "p", parentEpoch) })
		testkit.Wait(t, &wg, "the close and the drain cut-off")
		require.NoError(t, closeErr)
		require.NoError(t, drainErr)
	}
}
