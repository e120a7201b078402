package storetest

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/session"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestWriteSyntheticWritesWhatCreateWrites: the synthetic log of a header
// and its events holds exactly the bytes Create writes for them, and the
// store reads the events back.
func TestWriteSyntheticWritesWhatCreateWrites(t *testing.T) {
	ctx := context.Background()
	h := session.Header{ID: "synthetic/1", CreatedAt: 1789000001000, Cwd: "/work/project", DelegationDepth: 1}
	events := []session.Event{
		{Type: "feedback/record", Seq: 0, Time: 1789000001001, Data: json.RawMessage(`{"text":"a <b> & \u2028"}`)},
		{Type: "feedback/record", Seq: 1, Time: 1789000001002, Data: json.RawMessage(`{"n":2}`)},
	}
	synthetic, created := t.TempDir(), t.TempDir()
	require.NoError(t, WriteSynthetic(synthetic, session.Log{Header: h, Events: events}))
	store, err := session.OpenJSONL(created)
	require.NoError(t, err)
	require.NoError(t, store.Create(ctx, h, events))
	require.NoError(t, store.Close())
	require.Equal(t, readLog(t, created, h), readLog(t, synthetic, h))

	reader, err := session.OpenJSONL(synthetic)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, reader.Close()) })
	log, err := reader.Inspect(ctx, h.ID)
	require.NoError(t, err)
	require.Equal(t, events, log.Events)
}

// TestWriteSyntheticRefusesEventsAppendWouldRefuse: events that do not
// continue the log from seq 0 are refused, as Append refuses them.
func TestWriteSyntheticRefusesEventsAppendWouldRefuse(t *testing.T) {
	h := session.Header{ID: "gap", CreatedAt: 1}
	err := WriteSynthetic(t.TempDir(), session.Log{Header: h, Events: []session.Event{{Type: "feedback/record", Seq: 1, Data: json.RawMessage(`{}`)}}})
	require.ErrorIs(t, err, session.ErrSeqMismatch)
}

func readLog(t *testing.T, root string, h session.Header) string {
	t.Helper()
	path, err := logpath.Path(root, h.Cwd, h.ID)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// TestRelistingStore: the relisting store finds what the store lists and
// reports the rest as not found.
func TestRelistingStore(t *testing.T) {
	root := t.TempDir()
	note := []session.Event{{Type: "feedback/record", Data: json.RawMessage(`{}`)}}
	require.NoError(t, WriteSynthetic(root, session.Log{Header: session.Header{ID: "listed", CreatedAt: 1}, Events: note}))
	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	relisting := RelistingStore{store}
	ctx := context.Background()
	got, err := relisting.Inspect(ctx, "listed")
	require.NoError(t, err)
	require.Equal(t, "listed", got.Header.ID)
	_, err = relisting.Inspect(ctx, "unlisted")
	require.ErrorIs(t, err, session.ErrNotFound)
}
