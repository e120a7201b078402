package pgstore

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// state is id's sessions.state.
func state(t *testing.T, conn *pgx.Conn, id string) string {
	t.Helper()
	var s string
	require.NoError(t, conn.QueryRow(ctx, `SELECT state FROM sessions WHERE id = $1`, id).Scan(&s))
	return s
}

// A release marks the session disposed only when no child of it is
// undisposed, whichever store (node) releases which: a parent released
// before its child stays active until the child is disposed, which
// disposes it too. Disposal is not final: Acquire makes a
// disposed session active again, except a child whose parent is disposed
// (only a live parent resumes its children).
func TestReleaseDisposesChildFirstWhateverNodeReleases(t *testing.T) {
	dsn := cluster.Database(t)
	nodeA, nodeB := openStore(t, dsn, WithOwner("a")), openStore(t, dsn, WithOwner("b"))
	conn := connect(t, dsn)
	require.NoError(t, nodeA.Create(ctx, storetest.Header("p", ""), nil))
	require.NoError(t, nodeA.Create(ctx, storetest.Header("c", "p"), nil))
	parentEpoch, err := nodeA.Acquire(ctx, "p")
	require.NoError(t, err)
	childEpoch, err := nodeB.Acquire(ctx, "c")
	require.NoError(t, err)

	require.NoError(t, nodeA.Release(ctx, "p", parentEpoch))
	require.Equal(t, "active", state(t, conn, "p"), "a parent is not disposed before its child")
	require.NoError(t, nodeB.Release(ctx, "c", childEpoch))
	require.Equal(t, "disposed", state(t, conn, "c"))
	require.Equal(t, "disposed", state(t, conn, "p"), "the last child's release disposes its released parent")

	parentEpoch, err = nodeB.Acquire(ctx, "p")
	require.NoError(t, err)
	require.NoError(t, nodeB.Release(ctx, "p", parentEpoch))
	require.Equal(t, "disposed", state(t, conn, "p"), "released after its child, the parent is disposed")

	_, err = nodeA.Acquire(ctx, "c")
	require.ErrorIs(t, err, session.ErrNotFound, "a child of a disposed parent is not resumed")
	require.Contains(t, err.Error(), `parent "p" is disposed`)
	require.Equal(t, "disposed", state(t, conn, "c"))

	parentEpoch, err = nodeA.Acquire(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, "active", state(t, conn, "p"), "a disposed session is resumed")
	childEpoch, err = nodeA.Acquire(ctx, "c")
	require.NoError(t, err, "under its live parent the child is resumed")
	require.Equal(t, "active", state(t, conn, "c"))
	require.NoError(t, nodeA.Release(ctx, "c", childEpoch))
	require.NoError(t, nodeA.Release(ctx, "p", parentEpoch))
	require.Equal(t, []string{"disposed", "disposed"}, []string{state(t, conn, "c"), state(t, conn, "p")})
}

// A child created under a parent that is disposed meanwhile is refused,
// so no undisposed child ever sits below a disposed parent.
func TestCreateUnderADisposedParentIsRefused(t *testing.T) {
	dsn := cluster.Database(t)
	s := openStore(t, dsn)
	require.NoError(t, s.Create(ctx, storetest.Header("p", ""), nil))
	epoch, err := s.Acquire(ctx, "p")
	require.NoError(t, err)
	require.NoError(t, s.Release(ctx, "p", epoch))
	err = s.Create(ctx, storetest.Header("late", "p"), nil)
	require.ErrorIs(t, err, session.ErrNotFound)
	require.Contains(t, err.Error(), `parent "p" is disposed`)
	_, err = s.Inspect(ctx, "late")
	require.ErrorIs(t, err, session.ErrNotFound, "nothing of the refused child is stored")
}

// A parent released while a child of it is still active stays active with
// no owner; the release of its last undisposed child disposes it too, and
// so on upward: whichever order the family is released in, every released
// family ends disposed.
func TestReleaseOfTheLastChildDisposesAReleasedParent(t *testing.T) {
	dsn := cluster.Database(t)
	for _, order := range [][]string{{"g", "p", "c"}, {"c", "p", "g"}, {"p", "g", "c"}, {"g", "c", "p"}} {
		t.Run(strings.Join(order, "-"), func(t *testing.T) {
			nodeA, nodeB := openStore(t, dsn, WithOwner("a")), openStore(t, dsn, WithOwner("b"))
			conn := connect(t, dsn)
			ids := map[string]string{}
			for _, name := range []string{"g", "p", "c"} {
				ids[name] = order[0] + order[1] + order[2] + "-" + name
			}
			require.NoError(t, nodeA.Create(ctx, storetest.Header(ids["g"], ""), nil))
			require.NoError(t, nodeA.Create(ctx, storetest.Header(ids["p"], ids["g"]), nil))
			require.NoError(t, nodeA.Create(ctx, storetest.Header(ids["c"], ids["p"]), nil))
			holders := map[string]*Store{"g": nodeA, "p": nodeB, "c": nodeA}
			epochs := map[string]session.Epoch{}
			for _, name := range []string{"g", "p", "c"} {
				e, err := holders[name].Acquire(ctx, ids[name])
				require.NoError(t, err)
				epochs[name] = e
			}
			for _, name := range order {
				require.NoError(t, holders[name].Release(ctx, ids[name], epochs[name]))
			}
			for _, name := range []string{"c", "p", "g"} {
				require.Equal(t, "disposed", state(t, conn, ids[name]), "session %s after releases in the order %v", name, order)
			}
		})
	}
}

// The cascade stops at a parent that still holds its lease, or that has
// a message pending, or another child still active.
func TestCascadeStopsAtALiveOrBusyParent(t *testing.T) {
	dsn := cluster.Database(t)
	s := openStore(t, dsn)
	conn := connect(t, dsn)
	for _, id := range []string{"held", "pending", "siblings"} {
		require.NoError(t, s.Create(ctx, storetest.Header(id, ""), nil))
	}
	for _, id := range []string{"held/c", "pending/c", "siblings/c", "siblings/d"} {
		require.NoError(t, s.Create(ctx, storetest.Header(id, strings.Split(id, "/")[0]), nil))
	}
	held, err := s.Acquire(ctx, "held")
	require.NoError(t, err)
	releaseAll := func(ids ...string) {
		for _, id := range ids {
			e, err := s.Acquire(ctx, id)
			require.NoError(t, err)
			require.NoError(t, s.Release(ctx, id, e))
		}
	}
	pendingEpoch, err := s.Acquire(ctx, "pending")
	require.NoError(t, err)
	admitted, err := durableInbox{s}.Admit(ctx, "pending/c", session.Admission{MessageID: "m1", From: "pending", FromEpoch: pendingEpoch, Body: []byte(`{}`)})
	require.NoError(t, err)
	require.True(t, admitted)
	_, err = conn.Exec(ctx, `INSERT INTO inbox (session_id, msg_id, body) VALUES ('pending', 'm2', '{}')`)
	require.NoError(t, err)
	require.NoError(t, s.Release(ctx, "pending", pendingEpoch))
	_, err = conn.Exec(ctx, `UPDATE inbox SET claimed_seq = -1 WHERE session_id = 'pending/c'`)
	require.NoError(t, err)
	releaseAll("siblings", "held/c", "pending/c", "siblings/c")

	require.Equal(t, "disposed", state(t, conn, "held/c"))
	require.Equal(t, "active", state(t, conn, "held"), "a parent holding its lease is not disposed")
	require.Equal(t, "disposed", state(t, conn, "pending/c"))
	require.Equal(t, "active", state(t, conn, "pending"), "a parent with a message pending is not disposed")
	require.Equal(t, "active", state(t, conn, "siblings"), "a parent with a child still active is not disposed")
	releaseAll("siblings/d")
	require.Equal(t, "disposed", state(t, conn, "siblings"))
	require.NoError(t, s.Release(ctx, "held", held))
	require.Equal(t, "disposed", state(t, conn, "held"))
}

// Siblings released at once, from two stores, under a parent released
// before them: whichever release comes last sees every sibling disposed
// and disposes the parent, so it ends disposed in every run.
func TestSiblingsReleasedAtOnceDisposeTheirReleasedParent(t *testing.T) {
	dsn := cluster.Database(t)
	nodes := []*Store{openStore(t, dsn, WithOwner("a")), openStore(t, dsn, WithOwner("b"))}
	conn := connect(t, dsn)
	for round := range 5 {
		p := fmt.Sprintf("p%d", round)
		require.NoError(t, nodes[0].Create(ctx, storetest.Header(p, ""), nil))
		epochs := make([]session.Epoch, 6)
		for i := range epochs {
			require.NoError(t, nodes[0].Create(ctx, storetest.Header(fmt.Sprintf("%s/%d", p, i), p), nil))
			e, err := nodes[i%2].Acquire(ctx, fmt.Sprintf("%s/%d", p, i))
			require.NoError(t, err)
			epochs[i] = e
		}
		parentEpoch, err := nodes[0].Acquire(ctx, p)
		require.NoError(t, err)
		require.NoError(t, nodes[0].Release(ctx, p, parentEpoch))
		var wg sync.WaitGroup
		errs := make([]error, len(epochs))
		for i := range epochs {
			wg.Go(func() { errs[i] = nodes[i%2].Release(ctx, fmt.Sprintf("%s/%d", p, i), epochs[i]) })
		}
		testkit.Wait(t, &wg, "the releases")
		require.NoError(t, errors.Join(errs...))
		require.Equal(t, "disposed", state(t, conn, p), "round %d", round)
	}
}
