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
	awaitReply(t, w, x.child, "across") // a kill before its turn ends would close it interrupted, unanswered

	x.holder.Kill()
	after := followup(t, w, x.sender, x.parent, x.child, "reply after a died")
	w.awaitLogged(x.child, after)
	require.Greater(t, claimedEpoch(t, w.ctx, w.dsn, x.child, after), x.epoch, "run by the node that took the child over")
	sleepFor(*loadFor)
	w.finish(d, []Acked{{Node: "b", Child: x.child, MessageID: across}, {Node: "b", Child: x.child, MessageID: after}}, x.sender)
	require.Contains(t, turnsOf(t, w, x.child).texts, "across")
}

// awaitReply waits (bounded) until an assistant message of session id
// holds s.
func awaitReply(t *testing.T, w *world, id, s string) {
	t.Helper()
	awaitEventHolding(t, w, id, "assistant/message", s, "the reply")
}

// BenchmarkWakeAcrossNodes measures, per iteration, admit→claim: from a
// follow-up's commit in the durable inbox (accepted_at, the database's
// clock) to its claim (the time of its user/message event, written by
// the node that runs it), for a child resident on another node than its
// parent (the admission's NOTIFY wakes the holder, which queues it)
// against a child resident on its parent's node (the admitting node
// queues it itself), in the same run: across/same is the cost of the
// wake. The sender's acknowledgement (the subagent.prompt round trip) is
// reported beside it for each.
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
	var same, across claimTimes
	b.ResetTimer()
	for i := range b.N {
		same.add(admitToClaim(b, ctx, conn, x.holder, local, children[0], i))
		across.add(admitToClaim(b, ctx, conn, x.sender, x.parent, x.child, i))
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64((d / time.Duration(b.N)).Microseconds()) / 1000 }
	b.ReportMetric(ms(same.claim), "same-node-ms")
	b.ReportMetric(ms(across.claim), "across-nodes-ms")
	b.ReportMetric(float64(across.claim)/float64(same.claim), "across/same")
	b.ReportMetric(ms(same.ack), "same-ack-ms")
	b.ReportMetric(ms(across.ack), "across-ack-ms")
}

// claimTimes sums admit→claim and the sender's acknowledgement.
type claimTimes struct{ claim, ack time.Duration }

func (c *claimTimes) add(claim, ack time.Duration) { c.claim, c.ack = c.claim+claim, c.ack+ack }

// admitToClaim sends the i-th follow-up to child through n, waits until
// it is claimed and returns admit→claim (database stamps) and the time
// n took to acknowledge it.
func admitToClaim(b *testing.B, ctx context.Context, conn *pgx.Conn, n *Node, parent, child string, i int) (claim, ack time.Duration) {
	sent := time.Now()
	id, err := n.Followup(ctx, parent, child, fmt.Sprintf("reply %d", i))
	require.NoError(b, err)
	ack = time.Since(sent)
	for {
		var admitted, claimed *float64
		require.NoError(b, conn.QueryRow(ctx, `SELECT extract(epoch FROM i.accepted_at) * 1000, (e.line::jsonb ->> 'time')::float8
			FROM inbox i LEFT JOIN events e ON e.session_id = i.session_id AND e.seq = i.claimed_seq
			WHERE i.session_id = $1 AND i.msg_id = $2`, child, id).Scan(&admitted, &claimed))
		if claimed != nil {
			return time.Duration((*claimed - *admitted) * float64(time.Millisecond)), ack
		}
		require.NoError(b, pause(ctx, time.Millisecond))
	}
}
