package multiproc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// crossNode is a child resident on one node while its parent is live on
// another: holder runs child (waiting: it owns a grandchild that sleeps),
// sender has parent live.
type crossNode struct {
	holder, sender *Node
	parent, child  string
	epoch          int64 // the child's epoch on holder
}

// placeAcross makes a cross-node pair without timing: node "c" starts a
// parent and its child, runs a long turn in the child and leaves a
// follow-up (spawn a sleeping grandchild) pending behind it, and is
// killed; node a, the only survivor, is woken for the pending follow-up
// (its sweep, once c's lease expired), takes the child over and runs it,
// so the child waits there; node b starts and takes the parent over.
func placeAcross(tb testing.TB, ctx context.Context, start func(name string) *Node, dsn string) crossNode {
	tb.Helper()
	doomed, holder := start("c"), start("a")
	parent, children, err := doomed.CreateParent(ctx, 1)
	require.NoError(tb, err)
	child := children[0]
	long, err := doomed.Followup(ctx, parent, child, "sleep 10m")
	require.NoError(tb, err)
	require.NoError(tb, AwaitLogged(ctx, dsn, []Acked{{Child: child, MessageID: long}}))
	spawn, err := doomed.Followup(ctx, parent, child, "spawn grandchild: sleep 10m")
	require.NoError(tb, err)
	doomed.Kill()
	require.NoError(tb, AwaitLogged(ctx, dsn, []Acked{{Child: child, MessageID: spawn}}), "node a ran what c left pending")
	epoch := awaitOwner(tb, ctx, dsn, child, holder.Name)
	sender := start("b")
	_, err = sender.TakeOver(ctx, parent, ttl/10)
	require.NoError(tb, err)
	return crossNode{holder: holder, sender: sender, parent: parent, child: child, epoch: epoch}
}

// awaitOwner waits (bounded) until node owns id and returns the epoch.
func awaitOwner(tb testing.TB, ctx context.Context, dsn, id, node string) int64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		var owner *string
		var epoch int64
		require.NoError(tb, withConn(ctx, dsn, func(conn *pgx.Conn) error {
			return conn.QueryRow(ctx, `SELECT owner, epoch FROM sessions WHERE id = $1`, id).Scan(&owner, &epoch)
		}))
		if owner != nil && *owner == node {
			return epoch
		}
		require.NoError(tb, pause(ctx, ttl/20), "session %s not held by %s", id, node)
	}
}

// claimedEpoch is the epoch under which msgID's user/message event was
// written to child's log.
func claimedEpoch(tb testing.TB, ctx context.Context, dsn, child, msgID string) int64 {
	tb.Helper()
	var epoch int64
	require.NoError(tb, withConn(ctx, dsn, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `SELECT epoch FROM events WHERE session_id = $1 AND type = 'user/message'
			AND line::jsonb -> 'data' ->> 'id' = $2`, child, msgID).Scan(&epoch)
	}))
	return epoch
}

// followupAcrossNodes: a follow-up sent through node b's API (where the
// parent is live) to a child resident on node a is answered there, in
// a's epoch; after a is killed, the next one (acknowledged while a's
// lease is still live) is answered by the node that takes the child
// over, under a newer epoch; nothing acknowledged is lost.
func followupAcrossNodes(t *testing.T, w *world) {
	x := placeAcross(t, w.ctx, w.start, w.dsn)
	d := NewDriver()
	w.family(d, x.sender, 2)
	d.Run(1)

	across, err := x.sender.Followup(w.ctx, x.parent, x.child, "reply across")
	require.NoError(t, err)
	w.awaitLogged(x.child, across)
	require.Equal(t, x.epoch, claimedEpoch(t, w.ctx, w.dsn, x.child, across), "run by node a, which holds the child")

	x.holder.Kill()
	after := followup(t, w, x.sender, x.parent, x.child, "reply after a died")
	w.awaitLogged(x.child, after)
	require.Greater(t, claimedEpoch(t, w.ctx, w.dsn, x.child, after), x.epoch, "run by the node that took the child over")
	sleepFor(*loadFor)
	w.finish(d, []Acked{{Node: "b", Child: x.child, MessageID: across}, {Node: "b", Child: x.child, MessageID: after}}, x.sender)
	require.Contains(t, turnsOf(t, w, x.child).texts, "across")
}

// BenchmarkWakeAcrossNodes measures, per iteration, the time from
// sending a follow-up to its claim (its user/message event committed)
// for a child resident on another node than its parent (admission, NOTIFY
// wake, the holder's claim) against a child resident on its parent's
// node (admission, the local inbox, the claim), in the same run:
// across/same is the cost of the wake.
func BenchmarkWakeAcrossNodes(b *testing.B) {
	bin := buildOnce(b)
	ctx := context.Background()
	dsn := cluster.Database(b)
	start := func(name string) *Node { return startBench(b, bin, dsn, name) }
	x := placeAcross(b, ctx, start, dsn)
	local, children, err := x.holder.CreateParent(ctx, 1)
	require.NoError(b, err)
	spawn, err := x.holder.Followup(ctx, local, children[0], "spawn grandchild: sleep 10m")
	require.NoError(b, err)
	require.NoError(b, AwaitLogged(ctx, dsn, []Acked{{Child: children[0], MessageID: spawn}}))
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(b, err)
	defer conn.Close(ctx)
	claim := func(n *Node, parent, child string, i int) time.Duration {
		sent := time.Now()
		id, err := n.Followup(ctx, parent, child, fmt.Sprintf("reply %d", i))
		require.NoError(b, err)
		for {
			var claimed bool
			require.NoError(b, conn.QueryRow(ctx, `SELECT claimed_seq IS NOT NULL FROM inbox WHERE session_id = $1 AND msg_id = $2`, child, id).Scan(&claimed))
			if claimed {
				return time.Since(sent)
			}
		}
	}
	var same, across time.Duration
	b.ResetTimer()
	for i := range b.N {
		same += claim(x.holder, local, children[0], i)
		across += claim(x.sender, x.parent, x.child, i)
	}
	b.StopTimer()
	n := time.Duration(b.N)
	b.ReportMetric(float64((same/n).Microseconds())/1000, "same-node-ms")
	b.ReportMetric(float64((across/n).Microseconds())/1000, "across-nodes-ms")
	b.ReportMetric(float64(across)/float64(same), "across/same")
}
