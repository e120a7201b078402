package multiproc

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// cluster is the private Postgres server every node of a test shares
// (one fresh database per test); pgtest.Main also checks for leaked
// goroutines in this test binary.
var cluster *pgtest.Cluster

func TestMain(m *testing.M) { pgtest.Main(m, &cluster) }

// loadFor is how long each scenario drives follow-ups around its fault;
// `make stress` runs it longer.
var loadFor = flag.Duration("multiproc.load", 300*time.Millisecond, "how long each multi-process scenario drives load around its fault")

// ttl is the nodes' lease TTL: short, so a takeover waits little, yet
// long enough that a node of a loaded machine (the race detector, other
// tests) renews in time.
const ttl = 2 * time.Second

// bound is the most any wait on the nodes or the store may take before
// the test fails naming what it waited for.
const bound = time.Minute

// world is one test's store and the binary its nodes run.
type world struct {
	t     *testing.T
	bin   string
	dsn   string
	ctx   context.Context
	nodes []*Node // every node started, in order
}

func newWorld(t *testing.T, bin string) *world {
	ctx, cancel := context.WithTimeout(context.Background(), 5*bound)
	t.Cleanup(cancel)
	return &world{t: t, bin: bin, dsn: cluster.Database(t), ctx: ctx}
}

// start runs node name; the first node's store gets the lease history.
// A node still running when the test ends is killed.
func (w *world) start(name string) *Node {
	w.t.Helper()
	n, err := Start(w.bin, w.dsn, name, ttl)
	require.NoError(w.t, err)
	w.nodes = append(w.nodes, n)
	w.t.Cleanup(func() {
		if !n.Exited() {
			_ = n.Resume()
			n.Kill()
		}
	})
	require.NoError(w.t, InstallHistory(w.ctx, w.dsn))
	return n
}

// stop shuts n down gracefully and requires a clean exit with its leak
// check passed.
func (w *world) stop(n *Node) {
	w.t.Helper()
	code, err := n.Stop(bound)
	require.NoError(w.t, err)
	require.Zero(w.t, code, "node %s exit status; stderr:\n%s", n.Name, n.Stderr())
	require.Contains(w.t, n.Stderr(), "leak check: no goroutine left", "node %s", n.Name)
}

// family creates a parent with children children on n and gives it to d.
func (w *world) family(d *Driver, n *Node, children int) (string, []string) {
	w.t.Helper()
	parent, ids, err := n.CreateParent(w.ctx, children)
	require.NoError(w.t, err)
	d.Add(n, parent, ids)
	return parent, ids
}

// awaitLogged waits (bounded) until msgID is logged in child.
func (w *world) awaitLogged(child, msgID string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.ctx, bound)
	defer cancel()
	require.NoError(w.t, AwaitLogged(ctx, w.dsn, []Acked{{Child: child, MessageID: msgID}}))
}

// finish stops the driver, requires every send acknowledged and logged,
// stops the nodes and runs the checker; it returns the report.
func (w *world) finish(d *Driver, extra []Acked, nodes ...*Node) Report {
	w.t.Helper()
	acked, failed, errs := d.Wait()
	if failed > 0 {
		for _, n := range w.nodes {
			w.t.Logf("node %s stderr:\n%s", n.Name, n.Stderr())
		}
	}
	require.Zero(w.t, failed, "follow-ups refused: %v", errs)
	acked = append(acked, extra...)
	ctx, cancel := context.WithTimeout(w.ctx, bound)
	defer cancel()
	require.NoError(w.t, AwaitLogged(ctx, w.dsn, acked))
	for _, n := range nodes {
		w.stop(n)
	}
	r, err := Check(w.ctx, w.dsn, acked)
	require.NoError(w.t, err)
	require.Empty(w.t, r.Violations)
	require.NotZero(w.t, r.Acked)
	w.t.Logf("checked %d sessions, %d events, %d acquisitions, %d acknowledged follow-ups, %d disposed parents",
		r.Sessions, r.Events, r.Acquisitions, r.Acked, r.DisposedParents)
	return r
}

// sleepFor drives load for the scenario's window.
func sleepFor(d time.Duration) { <-time.After(d) }

func buildOnce(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := Build(ctx, root, t.TempDir())
	require.NoError(t, err)
	return bin
}

// TestNodes runs the multi-process scenarios on one binary, each on a
// fresh store, each ending with the invariant checker.
func TestNodes(t *testing.T) {
	bin := buildOnce(t)
	t.Run("KillMidTurn", func(t *testing.T) { killMidTurn(t, newWorld(t, bin)) })
	t.Run("PausePastTTL", func(t *testing.T) { pausePastTTL(t, newWorld(t, bin)) })
	t.Run("RollingRestart", func(t *testing.T) { rollingRestart(t, newWorld(t, bin)) })
	t.Run("FollowupAcrossNodes", func(t *testing.T) { followupAcrossNodes(t, newWorld(t, bin)) })
	t.Run("PromptToPausedNode", func(t *testing.T) { promptToPausedNode(t, newWorld(t, bin)) })
	t.Run("PromptThroughAnyNode", func(t *testing.T) { promptThroughAnyNode(t, newWorld(t, bin)) })
	t.Run("PromptSessionThroughAnyNode", func(t *testing.T) { promptSessionThroughAnyNode(t, newWorld(t, bin)) })
}

// killMidTurn: node a is killed (kill -9) while two children run a long
// turn, with load on node b all along; after a's leases expired node c
// takes one parent over, that child's interrupted turn is closed and the
// next follow-up runs under a new epoch; the other child, which nobody
// prompts, is taken over by a survivor's sweep, which closes its turn;
// every node and the CLI list the children alike; nothing acknowledged is
// lost.
func killMidTurn(t *testing.T, w *world) {
	a, b, c := w.start("a"), w.start("b"), w.start("c")
	d := NewDriver()
	parent, children := w.family(d, a, 2)
	w.family(d, b, 3)
	long, err := a.Followup(w.ctx, parent, children[0], "sleep 10m") // the driver's follow-ups queue behind it
	require.NoError(t, err)
	d.Run(2)
	w.awaitLogged(children[0], long)
	orphanParent, orphans, err := a.CreateParent(w.ctx, 1) // nobody prompts them after the kill
	require.NoError(t, err)
	orphaned, err := a.Followup(w.ctx, orphanParent, orphans[0], "sleep 10m")
	require.NoError(t, err)
	w.awaitLogged(orphans[0], orphaned)
	sleepFor(*loadFor)
	a.Kill()
	d.Quiet(a)
	t.Logf("%d follow-ups sent to node a got no answer (killed)", d.Unanswered())

	_, err = c.TakeOver(w.ctx, parent, ttl/10) // waits until a's lease expired (the checker reads when)
	require.NoError(t, err)
	after := followup(t, w, c, parent, children[0], "reply after the takeover")
	d.Rehome(parent, c) // once the child is taken over too: its lease may outlive its parent's
	sleepFor(*loadFor)
	requireOneCatalog(t, w, parent, children, b, c)
	awaitSwept(t, w, orphans[0])
	w.finish(d, []Acked{{Node: "a", Child: children[0], MessageID: long}, {Node: "c", Child: children[0], MessageID: after},
		{Node: "a", Child: orphans[0], MessageID: orphaned}}, b, c)
	require.Equal(t, []string{"completed", "interrupted"}, turnsOf(t, w, orphans[0]).reasons, "a survivor's sweep closed the dead node's open turn")

	turns := turnsOf(t, w, children[0])
	require.GreaterOrEqual(t, len(turns.reasons), 3)
	require.Equal(t, []string{"completed", "interrupted", "completed"}, turns.reasons[:3], "the killed turn is closed, the next one completes")
	// The killed turn's end is written by whoever repairs the log first (a
	// sweep, or the resume that then runs the next turn under the same
	// epoch), so it is the next turn's start that must be newer.
	require.Less(t, turns.starts[1], turns.starts[2], "the turn after the takeover runs under a new epoch")
}

// pausePastTTL: node a is paused (SIGSTOP) mid-turn for longer than its
// lease TTL; node b takes the parent and the child over and runs the next
// follow-up; when a continues (SIGCONT) its turn's next append is fenced
// and nothing of it reaches the store.
func pausePastTTL(t *testing.T, w *world) {
	a, b := w.start("a"), w.start("b")
	d := NewDriver()
	parent, children := w.family(d, a, 1)
	w.family(d, b, 2)
	d.Quiet(a)
	d.Run(2)
	slow, err := a.Followup(w.ctx, parent, children[0], "sleep 2s\nreply too late")
	require.NoError(t, err)
	w.awaitLogged(children[0], slow)
	require.NoError(t, a.Pause())

	_, err = b.TakeOver(w.ctx, parent, ttl/10)
	require.NoError(t, err)
	after := followup(t, w, b, parent, children[0], "reply after the takeover")
	d.Rehome(parent, b)
	w.awaitLogged(children[0], after)
	require.NoError(t, a.Resume())
	awaitStderr(t, w, a, "FENCED", "is no longer the current lease; nothing was written") // its next append, refused
	sleepFor(*loadFor)
	w.finish(d, []Acked{{Node: "a", Child: children[0], MessageID: slow}, {Node: "b", Child: children[0], MessageID: after}}, a, b)

	turns := turnsOf(t, w, children[0])
	require.GreaterOrEqual(t, len(turns.reasons), 3)
	require.Equal(t, []string{"completed", "interrupted", "completed"}, turns.reasons[:3])
	require.NotContains(t, turns.texts, "too late", "the paused turn's output never reached the store")
}

// rollingRestart: each node in turn is quieted, stopped (SIGTERM) and
// started again while the others carry load; its parents are taken over
// by the next node at once (the stopped node released its leases).
func rollingRestart(t *testing.T, w *world) {
	nodes := []*Node{w.start("a"), w.start("b"), w.start("c")}
	d := NewDriver()
	for _, n := range nodes {
		w.family(d, n, 2)
	}
	d.Run(3)
	disposed := 0 // families found disposed after their node stopped
	for i, n := range nodes {
		sleepFor(*loadFor)
		d.Quiet(n)
		w.stop(n)
		disposed += disposedFamilies(t, w, d.Parents(n))
		next := nodes[(i+1)%len(nodes)]
		for _, p := range d.Parents(n) {
			attempts, err := next.TakeOver(w.ctx, p, ttl/10)
			require.NoError(t, err)
			require.Equal(t, 1, attempts, "a released lease is taken over without waiting for its TTL")
			d.Rehome(p, next)
		}
		nodes[i] = w.start(n.Name)
	}
	sleepFor(*loadFor)
	r := w.finish(d, nil, nodes...)
	// A graceful stop disposes the node's families child-first (a parent
	// released while a child's release was not yet visible stays active:
	// never disposed before its children), so the child-first check has
	// disposed parents to check.
	t.Logf("%d of %d families disposed right after their node stopped", disposed, 2*len(nodes))
	require.NotZero(t, disposed+r.DisposedParents, "no parent was disposed: the child-first check was vacuous")
}

// disposedFamilies counts the parents that are disposed with every
// child of them disposed.
func disposedFamilies(t *testing.T, w *world, parents []string) int {
	t.Helper()
	var n int
	require.NoError(t, withConn(w.ctx, w.dsn, func(conn *pgx.Conn) error {
		return conn.QueryRow(w.ctx, `SELECT count(*) FROM sessions p WHERE p.id = ANY($1) AND p.state = 'disposed'
			AND NOT EXISTS (SELECT 1 FROM sessions c WHERE c.parent_id = p.id AND c.state <> 'disposed')`, parents).Scan(&n)
	}))
	return n
}

// requireOneCatalog: the children of parent, as `dsh-actors list` (a
// process that runs no agent) and every node list them, are children in
// that order, with the same labels.
func requireOneCatalog(t *testing.T, w *world, parent string, children []string, nodes ...*Node) {
	t.Helper()
	out, err := exec.CommandContext(w.ctx, w.bin, "list", "--json", "--store", w.dsn, parent).Output()
	require.NoError(t, err)
	var listed []struct{ ID, Label string }
	require.NoError(t, json.Unmarshal(out, &listed), "%s", out)
	ids := make([]string, len(listed))
	for i, e := range listed {
		ids[i] = e.ID
	}
	require.Equal(t, children, ids, "dsh-actors list")
	for _, n := range nodes {
		var c struct{ Entries []struct{ ID, Label string } }
		require.NoError(t, n.Call(w.ctx, "subagent.list", map[string]any{"parentSessionId": parent}, &c))
		require.Equal(t, listed, c.Entries, "subagent.list on node %s", n.Name)
	}
}

// awaitSwept waits (bounded) until a survivor's sweep took session id
// over from the dead node that held it and released it.
func awaitSwept(t *testing.T, w *world, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(w.ctx, bound)
	defer cancel()
	for {
		var owner *string
		var epoch int64
		require.NoError(t, withConn(ctx, w.dsn, func(conn *pgx.Conn) error {
			return conn.QueryRow(ctx, `SELECT owner, epoch FROM sessions WHERE id = $1`, id).Scan(&owner, &epoch)
		}))
		if owner == nil {
			return
		}
		require.NoError(t, pause(ctx, ttl/10), "session %s still held by %s (epoch %d)", id, *owner, epoch)
	}
}

// awaitStderr waits (bounded) until n's stderr contains one of want (the
// fence's code or its message, whichever way the node reports it).
func awaitStderr(t *testing.T, w *world, n *Node, want ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(w.ctx, bound)
	defer cancel()
	for !slices.ContainsFunc(want, func(s string) bool { return strings.Contains(n.Stderr(), s) }) {
		require.NoError(t, pause(ctx, 20*time.Millisecond), "node %s never logged any of %q; stderr:\n%s", n.Name, want, n.Stderr())
	}
}

// turns is what a child's log says of its turns: each turn/end's reason,
// the epoch it was written under, the epoch each turn/start was written
// under, and the assistant text of the log.
type turns struct {
	reasons []string
	epochs  []int64
	starts  []int64
	texts   string
}

func turnsOf(t *testing.T, w *world, id string) turns {
	t.Helper()
	var out turns
	require.NoError(t, withConn(w.ctx, w.dsn, func(conn *pgx.Conn) error {
		rows, err := conn.Query(w.ctx, `SELECT type, epoch, line FROM events WHERE session_id = $1 ORDER BY seq`, id)
		if err != nil {
			return err
		}
		var typ, line string
		var epoch int64
		_, err = pgx.ForEachRow(rows, []any{&typ, &epoch, &line}, func() error {
			var e struct {
				Data struct {
					Reason  struct{ Kind string } `json:"reason"`
					Message json.RawMessage       `json:"message"`
				} `json:"data"`
			}
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				return err
			}
			switch typ {
			case "turn/start":
				out.starts = append(out.starts, epoch)
			case "turn/end":
				out.reasons = append(out.reasons, e.Data.Reason.Kind)
				out.epochs = append(out.epochs, epoch)
			case "assistant/message":
				out.texts += string(e.Data.Message)
			}
			return nil
		})
		return err
	}))
	return out
}

// followup sends content to child through n, retrying (bounded) while
// the child's lease, held by a node that died or paused, is not expired.
func followup(t *testing.T, w *world, n *Node, parent, child, content string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(w.ctx, bound)
	defer cancel()
	for {
		id, err := n.Followup(ctx, parent, child, content)
		if err == nil {
			return id
		}
		require.NoError(t, pause(ctx, ttl/10), "follow-up to %s on node %s: %v", child, n.Name, err)
	}
}
