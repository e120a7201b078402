package pgstore

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/storegen"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// world writes a JSONL store: a generated corpus (a parent with children
// carrying descriptors, families of other sessions), a log whose open
// turn a Load closed (the closers' own key order), and ids and payloads
// that need escaping.
func world(t *testing.T) string {
	root := t.TempDir()
	_, err := storegen.Generate(root, storegen.Shape{Sessions: 40, Children: 12, Turns: 2})
	require.NoError(t, err)
	s, err := session.OpenJSONL(root, session.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	require.NoError(t, s.Create(ctx, session.Header{ID: "interrupted", CreatedAt: 1783000000500, Cwd: "/work/alpha"}, nil))
	require.NoError(t, s.Append(ctx, "interrupted", []session.Event{
		{Type: vocab.TypeTurnStart, Seq: 0, Time: 100, Data: json.RawMessage(`{"turn":1}`)},
		{Type: vocab.TypeStepStart, Seq: 1, Time: 101, Data: json.RawMessage(`{"turn":1,"step":1}`)},
	}))
	_, err = s.Load(ctx, "interrupted")
	require.NoError(t, err)
	odd := session.Header{ID: "é/x ~.", CreatedAt: 1783000000600, Cwd: "/work/ü ber", ParentSession: storegen.Parent, Origin: "subagent", DelegationDepth: 1}
	require.NoError(t, s.Create(ctx, odd, []session.Event{{Type: "feedback/record", Seq: 0, Time: 1, Data: json.RawMessage("{\"t\":\"a\u2028b<&>\"}")}}))
	return root
}

func openJSONL(t *testing.T, root string) *session.JSONL {
	s, err := session.OpenJSONL(root, session.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// JSONL → Postgres → JSONL gives back the same files, byte for byte.
func TestImportThenExportIsByteIdentical(t *testing.T) {
	src := world(t)
	s := openStore(t, cluster.Database(t))
	report, err := s.Import(ctx, openJSONL(t, src))
	require.NoError(t, err)
	want := storetest.Files(t, src)
	require.Equal(t, ImportReport{Imported: len(want)}, report)

	dst := filepath.Join(t.TempDir(), "exported")
	n, err := s.Export(ctx, dst)
	require.NoError(t, err)
	require.Equal(t, len(want), n)
	require.Equal(t, want, storetest.Files(t, dst))

	report, err = s.Import(ctx, openJSONL(t, src))
	require.NoError(t, err)
	require.Equal(t, ImportReport{Present: len(want)}, report, "a second import leaves what is stored already")
	_, err = s.Export(ctx, dst)
	require.ErrorIs(t, err, fs.ErrExist, "an export never replaces a log")
}

// The catalog reader lists the same children, with the same labels,
// statuses and order, over the Postgres store as over the JSONL store it
// was imported from.
func TestListChildrenAnswersAsOverTheJSONLStore(t *testing.T) {
	src := world(t)
	jsonl := openJSONL(t, src)
	s := openStore(t, cluster.Database(t))
	_, err := s.Import(ctx, jsonl)
	require.NoError(t, err)
	overJSONL, overPostgres := query.New(session.NewSessions(jsonl)), query.New(session.NewSessions(s))
	for _, parent := range []string{storegen.Parent, storegen.ChildID(0), otherID(0), otherID(10), "interrupted", "missing"} {
		want, wantErr := query.ListChildren(ctx, overJSONL, parent)
		got, gotErr := query.ListChildren(ctx, overPostgres, parent)
		require.Equal(t, want, got, parent)
		if wantErr != nil {
			require.EqualError(t, gotErr, wantErr.Error(), parent)
		} else {
			require.NoError(t, gotErr, parent)
		}
	}
	family, err := query.ListChildren(ctx, overPostgres, otherID(10))
	require.NoError(t, err)
	require.Len(t, family, 9, "a family root's nine children")
	children, err := query.ListChildren(ctx, overPostgres, storegen.Parent)
	require.NoError(t, err)
	require.Len(t, children, 12, "the generated children with descriptors; the odd one has none")
}

// otherID is the id storegen gives its i-th other session (every tenth
// is a family root).
func otherID(i int) string { return fmt.Sprintf("o%07x-0000-4000-8000-%012x", i, i) }
