package dsh

import (
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/stretchr/testify/require"
)

// A postgres:// Dir opens the Postgres store: a child spawned there is in
// the catalog of a second runtime on the same database after the first
// closed, and cold-resumes there on its next Send.
func TestDirNamingPostgresOpensThePostgresStore(t *testing.T) {
	dsn := cluster.Database(t)
	first, err := Open(Options{Dir: dsn})
	require.NoError(t, err)
	p, err := first.StartAgent(bg, "parent")
	require.NoError(t, err)
	childID, err := first.Spawn(bg, p, "worker", event.Text("reply hello"))
	require.NoError(t, err)
	end, ok, err := first.WaitChild(bg, childID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "hello", event.TextOf(end.LastAssistantMessage))
	require.NoError(t, first.Close())

	second := open(t, Options{Dir: dsn})
	entries, err := second.Children(bg, "parent")
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, childID, entries[0].ID)
	p, err = second.ResumeAgent(bg, "parent")
	require.NoError(t, err)
	_, err = second.Send(bg, p, childID, event.Text("reply again"))
	require.NoError(t, err, "the child cold-resumes from the Postgres log")
	end, ok, err = second.WaitChild(bg, childID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "again", event.TextOf(end.LastAssistantMessage))
}

func TestDirNamingPostgresRefusesTheJSONLOptionsAndAnUnreachableServer(t *testing.T) {
	for _, opts := range []Options{
		{Dir: "postgres://localhost/x", Compression: "none"},
		{Dir: "postgresql://localhost/x", DurableAdmission: true},
		{Dir: "postgres://localhost/x", NoSync: true},
		{NoSync: true},
	} {
		_, err := Open(opts)
		require.ErrorIs(t, err, fault.InvalidRequest, "%+v", opts)
		require.ErrorContains(t, err, "configure the JSONL store: set Dir to its folder")
	}
	_, err := Open(Options{Dir: t.TempDir(), Compression: "gzip"})
	require.ErrorIs(t, err, fault.InvalidRequest)
	require.ErrorContains(t, err, `Options.Compression must be "zstd" or "none", got "gzip"`)

	unreachable := "postgres://dsh@127.0.0.1:1/none?connect_timeout=2"
	start := time.Now()
	_, err = Open(Options{Dir: unreachable})
	require.ErrorIs(t, err, fault.PersistenceUnavailable)
	t.Logf("refused after %v: %v", time.Since(start), err)
}

// Node and LeaseTTL name a Postgres store's leases: elsewhere, and a TTL
// too short to renew, are refused by code, naming the option.
func TestLeaseOptionsAreRefusedWhereTheyCannotApply(t *testing.T) {
	for _, opts := range []Options{
		{Dir: t.TempDir(), Node: "a"},
		{LeaseTTL: time.Second},
		{Dir: "postgres://localhost/x", LeaseTTL: time.Millisecond},
	} {
		_, err := Open(opts)
		require.ErrorIs(t, err, fault.InvalidRequest, "%+v", opts)
		require.ErrorContains(t, err, "Options.")
	}
}

// CancelTurn of a session another process on the Postgres store runs is
// fault.LeaseHeld, not AgentNotFound: this runtime cannot stop a turn
// there, and it only asked the store, so the lease stays its holder's
// and the holder's turn runs on. Released, the session is not attached.
func TestCancelTurnOfASessionRunningOnAnotherNodeIsLeaseHeld(t *testing.T) {
	dsn := cluster.Database(t)
	a, b := open(t, Options{Dir: dsn, Node: "a"}), open(t, Options{Dir: dsn, Node: "b"})
	require.NoError(t, a.OpenSession(bg, SessionSpec{ID: "s", Cwd: t.TempDir()}))
	_, err := a.PromptSession(bg, "s", event.Text("sleep 10m"), user)
	require.NoError(t, err)

	err = b.CancelTurn(bg, "s", true)
	require.ErrorIs(t, err, fault.LeaseHeld)
	require.EqualError(t, err, `session "s": lease is held by another process, which runs it`)
	_, live := b.Agent("s")
	require.False(t, live, "nothing is resumed here")
	require.NoError(t, a.CancelTurn(bg, "s", true), "its holder still runs it")

	idle(t, a, "s")
	require.NoError(t, a.Release(bg, "s"))
	require.ErrorIs(t, b.CancelTurn(bg, "s", true), fault.AgentNotFound)
}
