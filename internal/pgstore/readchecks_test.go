package pgstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// TestRowsAreReadWithTheJSONLStoresChecks: the same event line, stored as
// a row here and as a line of a JSONL log, reads alike: a pre-identity
// message is upgraded in memory, a malformed message, a retired
// vocabulary, an unknown type and an event envelope with a foreign key
// are refused with the same words (the log named as each store names
// it), the same sentinel and the same readable prefix; nothing is written.
func TestRowsAreReadWithTheJSONLStoresChecks(t *testing.T) {
	dsn := cluster.Database(t)
	s := openStore(t, dsn)
	conn := connect(t, dsn)
	for _, tc := range []struct{ name, line string }{
		{"pre-identity message", `{"type":"user/message","seq":1,"time":1,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}`},
		{"message without an id", `{"type":"user/message","seq":1,"time":1,"data":{"id":"","role":"user","source":{"kind":"user"},"content":[]},"surfaceOp":"append"}`},
		{"assistant without a model", `{"type":"assistant/message","seq":1,"time":1,"data":{"message":{"id":"a","role":"assistant","source":{"kind":"model"},"content":[]}},"surfaceOp":"append"}`},
		{"retired vocabulary", `{"type":"mode/set","seq":1,"time":1,"data":{}}`},
		{"unknown type", `{"type":"future/thing","seq":1,"time":1,"data":{}}`},
		{"foreign envelope key", `{"type":"feedback/record","seq":1,"time":1,"data":{},"x":1}`},
		{"type not a string", `{"type":7,"seq":1,"time":1,"data":{}}`},
		{"type not a string, ignorable", `{"type":7,"seq":1,"time":1,"data":{},"ignorable":true}`},
		{"data missing", `{"type":"feedback/record","seq":1,"time":1}`},
		{"time a string", `{"type":"feedback/record","seq":1,"time":"1","data":{}}`},
		{"seq a string", `{"type":"feedback/record","seq":"1","time":1,"data":{}}`},
		{"seq gap", `{"type":"feedback/record","seq":2,"time":1,"data":{}}`},
		{"not JSON", `{"type":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := strings.ReplaceAll(tc.name, " ", "-")
			h := storetest.Header(id, "")
			first := storetest.Note(0, "first")
			require.NoError(t, s.Create(ctx, h, []session.Event{first, storetest.Note(1, "second")}))
			_, err := conn.Exec(ctx, `UPDATE events SET line = $2 WHERE session_id = $1 AND seq = 1`, id, tc.line)
			require.NoError(t, err)

			root := t.TempDir()
			jsonl, err := session.OpenJSONL(root)
			require.NoError(t, err)
			defer func() { require.NoError(t, jsonl.Close()) }()
			require.NoError(t, jsonl.Create(ctx, h, nil))
			path, err := logpath.Path(root, h.Cwd, id)
			require.NoError(t, err)
			header, err := h.MarshalJSON()
			require.NoError(t, err)
			lines, err := session.EventLines(id, 0, []session.Event{first})
			require.NoError(t, err)
			// the line is followed by a turn/end, so that no JSONL read takes it for a torn tail
			closing := `{"type":"turn/end","seq":2,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`
			require.NoError(t, os.WriteFile(path, []byte(string(header)+"\n"+string(lines[0])+"\n"+tc.line+"\n"+closing+"\n"), 0o600))
			_, err = conn.Exec(ctx, `INSERT INTO events (session_id, seq, epoch, type, time, line) VALUES ($1, 2, 0, 'turn/end', 1, $2)`, id, closing)
			require.NoError(t, err)
			pgLog, pgErr := s.Inspect(ctx, id)
			jsonlLog, jsonlErr := jsonl.Inspect(ctx, id)

			if jsonlErr == nil {
				require.NoError(t, pgErr)
				require.Equal(t, jsonlLog.Events, pgLog.Events)
				return
			}
			require.Error(t, pgErr)
			require.Equal(t, strings.ReplaceAll(jsonlErr.Error(), path, "postgres:sessions/"+id), pgErr.Error())
			require.Equal(t, errors.Is(jsonlErr, session.ErrCorrupt), errors.Is(pgErr, session.ErrCorrupt))
			jsonlPrefix, jsonlLine, jsonlOK := session.ReadablePrefix(jsonlErr)
			pgPrefix, pgLine, pgOK := session.ReadablePrefix(pgErr)
			require.Equal(t, jsonlOK, pgOK)
			require.Equal(t, jsonlLine, pgLine)
			require.Equal(t, jsonlPrefix, pgPrefix)
		})
	}
}

// A row whose header line names another session is refused as the JSONL
// store refuses a log whose header names another session than the one
// read: a targeted read (Inspect, Load) in the JSONL store's words, the
// log named as this store names it, matching session.ErrCorrupt; List
// and ListChildren fail whole, as the JSONL listing does; nothing is
// written.
func TestAHeaderNamingAnotherSessionIsRefused(t *testing.T) {
	dsn := cluster.Database(t)
	s := openStore(t, dsn)
	conn := connect(t, dsn)
	require.NoError(t, s.Create(ctx, storetest.Header("parent", ""), []session.Event{storetest.Note(0, "p")}))
	require.NoError(t, s.Create(ctx, storetest.Header("child", "parent"), []session.Event{storetest.Note(0, "c")}))
	other, err := session.HeaderLine(storetest.Header("other", "parent"))
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `UPDATE sessions SET header_line = $2 WHERE id = $1`, "child", string(other))
	require.NoError(t, err)

	root := t.TempDir()
	jsonl, err := session.OpenJSONL(root)
	require.NoError(t, err)
	defer func() { require.NoError(t, jsonl.Close()) }()
	path, err := logpath.Path(root, "/work/project", "child")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, append(other, '\n'), 0o600))
	_, jsonlErr := jsonl.Inspect(ctx, "child")
	require.ErrorIs(t, jsonlErr, session.ErrCorrupt)
	want := strings.ReplaceAll(jsonlErr.Error(), path, "postgres:sessions/child")
	require.Equal(t, `corrupt session log "postgres:sessions/child": requested id "child" does not match header id "other"`, want)

	for name, read := range map[string]func(context.Context, string) (*session.Log, error){"Inspect": s.Inspect, "Load": s.Load} {
		_, err := read(ctx, "child")
		require.ErrorIs(t, err, session.ErrCorrupt, name)
		require.EqualError(t, err, want, name)
	}
	_, err = s.List(ctx)
	require.ErrorIs(t, err, session.ErrCorrupt)
	require.EqualError(t, err, want)
	_, err = s.ListChildren(ctx, "parent")
	require.ErrorContains(t, err, want)
	var lines int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM events WHERE session_id = 'child'`).Scan(&lines))
	require.Equal(t, 1, lines, "nothing is written")
}

// The repairing Load refuses, as the JSONL store's does and in its words
// (the log named as this store names it), a log the original cannot build
// a session from: here a user message without its surfaceOp, in an
// interrupted turn that Load would otherwise close. Inspect still reads
// it, and no row is written.
func TestABrokenSurfaceIsInspectedButNotLoaded(t *testing.T) {
	dsn := cluster.Database(t)
	s := openStore(t, dsn)
	conn := connect(t, dsn)
	h := storetest.Header("surf", "")
	require.NoError(t, s.Create(ctx, h, []session.Event{storetest.Note(0, "start"), storetest.Note(1, "message")}))
	for seq, line := range []string{
		`{"type":"turn/start","seq":0,"time":100,"data":{"turn":1}}`,
		`{"type":"user/message","seq":1,"time":100,"data":{"content":[],"source":{"kind":"user"},"role":"user","id":"m"}}`,
	} {
		_, err := conn.Exec(ctx, `UPDATE events SET line = $3 WHERE session_id = $1 AND seq = $2`, "surf", seq, line)
		require.NoError(t, err)
	}

	log, err := s.Inspect(ctx, "surf")
	require.NoError(t, err)
	require.Len(t, log.Events, 2)
	_, err = s.Load(ctx, "surf")
	require.ErrorIs(t, err, session.ErrCorrupt)
	require.EqualError(t, err, `stored session "surf" failed validation: invalid seed event at index 1: `+
		`session event "user/message" is surface-eligible and requires a surfaceOp marker (raw log: postgres:sessions/surf)`)
	var rows int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM events WHERE session_id = 'surf'`).Scan(&rows))
	require.Equal(t, 2, rows, "a refused load writes no closer")
}
