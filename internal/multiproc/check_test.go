package multiproc

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/pgstore"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestCheckFindsEveryBrokenInvariant: the checker passes a sound store
// and names each invariant broken in a store written to break them: a
// gap in seq, a stale writer's event, an epoch never acquired, a second
// owner while a lease was live, a message logged twice, a misclaimed and
// a pending inbox row, a parent disposed before its child and an
// acknowledged follow-up that is nowhere.
func TestCheckFindsEveryBrokenInvariant(t *testing.T) {
	ctx := context.Background()
	dsn := cluster.Database(t)
	store, err := pgstore.Open(ctx, dsn)
	require.NoError(t, err)
	require.NoError(t, store.Close())
	require.NoError(t, InstallHistory(ctx, dsn))
	exec := func(sql string, args ...any) {
		require.NoError(t, withConn(ctx, dsn, func(conn *pgx.Conn) error { _, err := conn.Exec(ctx, sql, args...); return err }))
	}
	session := func(id, parent string) {
		exec(`INSERT INTO sessions (id, header_line, parent_id, created_at, delegation_depth) VALUES ($1, '{}', NULLIF($2, ''), 0, 0)`, id, parent)
	}
	event := func(id string, seq, epoch int64, typ, msg string) {
		exec(`INSERT INTO events (session_id, seq, epoch, type, time, line) VALUES ($1, $2, $3, $4, 0, $5)`,
			id, seq, epoch, typ, `{"type":"`+typ+`","data":{"id":"`+msg+`"}}`)
		exec(`UPDATE sessions SET next_seq = $2 + 1 WHERE id = $1`, id, seq)
	}
	acquire := func(id, owner string) {
		exec(`UPDATE sessions SET epoch = epoch + 1, owner = $2, lease_until = now() + interval '1 hour' WHERE id = $1`, id, owner)
	}

	session("sound", "")
	acquire("sound", "a")
	exec(`UPDATE sessions SET owner = NULL, lease_until = NULL WHERE id = 'sound'`)
	acquire("sound", "b")
	event("sound", 0, 1, "user/message", "00000001-0000-4000-8000-000000000000")
	event("sound", 1, 2, "user/message", "00000002-0000-4000-8000-000000000000")
	exec(`INSERT INTO inbox (session_id, msg_id, body, claimed_epoch, claimed_seq) VALUES ('sound', '00000002-0000-4000-8000-000000000000', '{}', 2, 1)`)
	sound := []Acked{{Child: "sound", MessageID: "00000001-0000-4000-8000-000000000000"}, {Child: "sound", MessageID: "00000002-0000-4000-8000-000000000000"}}
	r, err := Check(ctx, dsn, sound)
	require.NoError(t, err)
	require.Empty(t, r.Violations)

	session("broken", "")
	acquire("broken", "a")
	acquire("broken", "b") // a's lease was live
	event("broken", 0, 2, "user/message", "00000003-0000-4000-8000-000000000000")
	event("broken", 1, 1, "user/message", "00000003-0000-4000-8000-000000000000")
	event("broken", 3, 7, "turn/end", "")
	exec(`INSERT INTO inbox (session_id, msg_id, body, claimed_epoch, claimed_seq) VALUES ('broken', '00000004-0000-4000-8000-000000000000', '{}', 2, 0), ('broken', '00000005-0000-4000-8000-000000000000', '{}', NULL, NULL)`)
	session("child", "broken")
	exec(`UPDATE sessions SET state = 'disposed' WHERE id = 'broken'`)
	r, err = Check(ctx, dsn, append(sound, Acked{Node: "a", Child: "broken", MessageID: "00000005-0000-4000-8000-000000000000"}, Acked{Node: "b", Child: "child", MessageID: "00000006-0000-4000-8000-000000000000"}))
	require.NoError(t, err)
	report := strings.Join(r.Violations, "\n")
	for _, want := range []string{
		"session broken: b acquired epoch 2 at",
		"while a's lease of epoch 1 was live",
		"session broken: seq 1 written under epoch 1 after epoch 2 (a stale writer)",
		"session broken: event 2 has seq 3 (not contiguous)",
		"session broken: seq 3 carries epoch 7, never acquired",
		"session broken: message 00000003-0000-4000-8000-000000000000 logged twice (seq 0 and 1)",
		`session broken: inbox message 00000004-0000-4000-8000-000000000000 claimed at seq 0, a user/message of message "00000003-0000-4000-8000-000000000000"`,
		"session broken is disposed before its child child (active)",
		"acknowledged follow-up lost: 00000006-0000-4000-8000-000000000000→child (acknowledged by b)",
	} {
		require.Contains(t, report, want)
	}
	require.NotContains(t, report, "00000005-0000-4000-8000-000000000000", "a pending inbox row is not lost")
	require.Len(t, r.Violations, 9, report)
}
