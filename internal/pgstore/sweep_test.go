package pgstore

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// A sweep takes over exactly the sessions whose holder let the lease
// expire more than the sweeper's TTL ago without releasing it: it closes
// the turn the holder left open under a new epoch and releases the
// session; the old holder's next append is fenced. Live leases, leases
// expired less than a TTL ago (a late renewal), released sessions and
// the sweeper's own leases are left alone.
func TestSweepTakesOverWhatADeadHolderLeft(t *testing.T) {
	dsn := cluster.Database(t)
	dead, live, sweeper := openStore(t, dsn, WithOwner("dead")), openStore(t, dsn, WithOwner("live")), openStore(t, dsn, WithOwner("sweeper"), WithTTL(time.Minute))
	conn := connect(t, dsn)
	openTurn := []session.Event{
		{Type: vocab.TypeTurnStart, Seq: 0, Time: 100, Data: json.RawMessage(`{"turn":1}`)},
		{Type: vocab.TypeStepStart, Seq: 1, Time: 101, Data: json.RawMessage(`{"turn":1,"step":1}`)},
	}
	epochs := map[string]session.Epoch{}
	for id, holder := range map[string]*Store{"abandoned": dead, "late": dead, "busy": live, "own": sweeper, "released": dead} {
		require.NoError(t, holder.Create(ctx, storetest.Header(id, ""), nil))
		epoch, err := holder.Acquire(ctx, id)
		require.NoError(t, err)
		require.NoError(t, holder.AppendFenced(ctx, id, epoch, openTurn))
		epochs[id] = epoch
	}
	require.NoError(t, dead.Release(ctx, "released", epochs["released"]))
	expireBy(t, conn, "abandoned", "61 seconds")
	expireBy(t, conn, "own", "61 seconds")
	expireBy(t, conn, "late", "59 seconds")

	swept, err := sweeper.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"abandoned"}, swept)

	log, err := sweeper.Inspect(ctx, "abandoned")
	require.NoError(t, err)
	require.Len(t, log.Events, 4)
	require.Equal(t, vocab.TypeTurnEnd, log.Events[3].Type)
	var owner *string
	var epoch session.Epoch
	require.NoError(t, conn.QueryRow(ctx, `SELECT owner, epoch FROM sessions WHERE id = 'abandoned'`).Scan(&owner, &epoch))
	require.Nil(t, owner, "released after the repair")
	require.Equal(t, epochs["abandoned"]+1, epoch)
	err = dead.AppendFenced(ctx, "abandoned", epochs["abandoned"], []session.Event{storetest.Note(4, "too late")})
	require.ErrorIs(t, err, fault.Fenced)

	for _, id := range []string{"busy", "late", "own", "released"} {
		log, err := sweeper.Inspect(ctx, id)
		require.NoError(t, err)
		require.Len(t, log.Events, 2, "%s is not swept", id)
	}
	swept, err = sweeper.Sweep(ctx)
	require.NoError(t, err)
	require.Empty(t, swept, "nothing is left to sweep")
	var jsonl session.Store = &session.JSONL{}
	_, sweeps := jsonl.(session.Sweeper)
	require.False(t, sweeps, "a store without leases that expire does not sweep")
}

// expireBy ends id's lease ago (an interval) in the database.
func expireBy(t *testing.T, conn *pgx.Conn, id, ago string) {
	t.Helper()
	_, err := conn.Exec(ctx, `UPDATE sessions SET lease_until = now() - $2::interval WHERE id = $1`, id, ago)
	require.NoError(t, err)
}
