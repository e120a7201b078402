package storegen

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/session"
)

// TestWriteWritesWhatTheStoreWrites: for ids and folders that need
// escaping and strings that need quoting, Write puts the log at the path
// the JSONL store does, holding exactly the bytes its Create writes.
func TestWriteWritesWhatTheStoreWrites(t *testing.T) {
	seed := 1
	cases := []struct{ id, cwd string }{
		{"plain-id_1.x", "/work/alpha"},
		{"é/x ~.\u2028😀", "/work/ü ber::a\\b"},
		{"..", ""},
		{".", "/"},
		{"quote\"back\\slash\ttab\x01ctl", "/a/"},
	}
	for _, c := range cases {
		h := Header{ID: c.id, CreatedAt: 1789000001000, Cwd: c.cwd, ParentSession: "p\n\"", SeedLength: 1, Origin: "subagent", DelegationDepth: 2}
		events := []Event{
			{Type: "feedback/record", Seq: 0, Time: 1789000001001, Data: json.RawMessage(`{"text":"a <b> & \u2028"}`)},
			{Type: "feedback/record", Seq: 1, Time: 1789000001002, SourceEventSeqs: []int64{0}, SurfaceOp: json.RawMessage(`"append"`)},
			{Type: "feedback/record", Seq: 2, Time: 1789000001002, Data: json.RawMessage(`[1,{"k":null}]`)},
		}
		synthetic, created := t.TempDir(), t.TempDir()
		_, err := Write(synthetic, Log{h, events})
		require.NoError(t, err)

		store, err := session.OpenJSONL(created)
		require.NoError(t, err)
		sh := session.Header{ID: h.ID, CreatedAt: h.CreatedAt, Cwd: h.Cwd, ParentSession: h.ParentSession, SeedLength: &seed,
			Origin: h.Origin, DelegationDepth: h.DelegationDepth}
		var se []session.Event
		for _, e := range events {
			se = append(se, session.Event{Type: e.Type, Seq: e.Seq, Time: e.Time, Data: e.Data, SourceEventSeqs: e.SourceEventSeqs, SurfaceOp: e.SurfaceOp})
		}
		require.NoError(t, store.Create(context.Background(), sh, se))
		require.NoError(t, store.Close())

		want, err := logpath.Path(created, h.Cwd, h.ID)
		require.NoError(t, err)
		got, err := logPath(synthetic, h.Cwd, h.ID)
		require.NoError(t, err)
		require.Equal(t, want[len(created):], got[len(synthetic):], "the path of %q in %q", c.id, c.cwd)
		wantBytes, err := os.ReadFile(want)
		require.NoError(t, err)
		gotBytes, err := os.ReadFile(got)
		require.NoError(t, err)
		require.Equal(t, string(wantBytes), string(gotBytes), "the log of %q", c.id)
	}
}
