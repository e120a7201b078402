package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestServeNodeFlagsAreRefusedWhereTheyCannotApply: --node and
// --lease-ttl name Postgres leases, so a JSONL folder refuses them, and a
// TTL too short to renew is refused, each as a usage error naming it.
func TestServeNodeFlagsAreRefusedWhereTheyCannotApply(t *testing.T) {
	for args, want := range map[string]string{
		"--store /tmp/x --node a":                         "--node and --lease-ttl apply to a Postgres store",
		"--store /tmp/x --lease-ttl 5s":                   "--node and --lease-ttl apply to a Postgres store",
		"--store /tmp/x --lease-ttl 0s":                   "--node and --lease-ttl apply to a Postgres store",
		"--store /tmp/x --lease-ttl -1s":                  "--node and --lease-ttl apply to a Postgres store",
		"--store /tmp/x --node=":                          "--node and --lease-ttl apply to a Postgres store",
		"--store postgres://h/db --lease-ttl 0s":          "--lease-ttl must be at least 100ms, got 0s",
		"--store postgres://h/db --node=":                 `--node must name this process, got ""`,
		"--store postgres://h/db --lease-ttl 10ms":        "--lease-ttl must be at least 100ms, got 10ms",
		"--store postgres://h/db --lease-ttl -1s":         "--lease-ttl must be at least 100ms, got -1s",
		"--store postgres://h/db --lease-ttl soon":        `invalid value "soon" for flag -lease-ttl`,
		"--store postgres://h/db --node a --leak-check x": `unexpected argument "x"`,
	} {
		var stderr bytes.Buffer
		_, status := parseServeFlags(strings.Fields(args), &stderr)
		require.Equal(t, 2, status, args)
		require.Contains(t, stderr.String(), want, args)
	}
	parsed, status := parseServeFlags(strings.Fields("--store postgres://h/db --node n1 --lease-ttl 1s --leak-check"), io.Discard)
	require.Equal(t, -1, status)
	require.Equal(t, nodeFlags{name: "n1", leaseTTL: time.Second}, parsed.node)
	require.True(t, parsed.leakCheck)
}

// TestServeNodeNamesItsLeases: a runtime opened with --node and
// --lease-ttl holds its sessions' leases under that name, for that TTL
// (the database's clock), and gives them up when it closes.
func TestServeNodeNamesItsLeases(t *testing.T) {
	dsn := cluster.Database(t)
	rt, err := openRuntime(dsn, dsh.Options{Logger: warnLogger(io.Discard), Node: "node-a", LeaseTTL: 7 * time.Second}, storeChoice{})
	require.NoError(t, err)
	ctx := context.Background()
	agent, err := rt.StartAgent(ctx, "top")
	require.NoError(t, err)

	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var owner string
	var left time.Duration
	require.NoError(t, conn.QueryRow(ctx, `SELECT owner, lease_until - now() FROM sessions WHERE id = $1`, agent.ID()).Scan(&owner, &left))
	require.Equal(t, "node-a", owner)
	require.Greater(t, left, 5*time.Second)
	require.LessOrEqual(t, left, 7*time.Second)

	require.NoError(t, rt.Close())
	var held int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM sessions WHERE owner IS NOT NULL`).Scan(&held))
	require.Zero(t, held)
}
