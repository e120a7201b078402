package main

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	dsh "github.com/dsh-actors/dsh-actors"
)

// storeReadCounter is a runtime whose History calls that read the store
// (the session is not live here) it counts.
type storeReadCounter struct {
	*dsh.Runtime
	storeReads atomic.Int32
}

func (r *storeReadCounter) History(ctx context.Context, id string) (dsh.History, error) {
	if _, live := r.Agent(id); !live {
		r.storeReads.Add(1)
	}
	return r.Runtime.History(ctx, id)
}

// session/load reads a stored session's log only through the resume
// (OpenSession checks it and resumes it, reading it once each); the
// replay reads the session live in memory, and no read of its own comes
// first.
func TestACPLoadReadsTheLogOnlyThroughTheResume(t *testing.T) {
	store, dir := t.TempDir(), t.TempDir()
	c := startACP(t, "--store", store)
	id := c.newSession(t, dir)
	_, err := c.prompt(id, "reply hi there")
	require.NoError(t, err)
	c.close(t)

	rt, err := dsh.Open(dsh.Options{Dir: store})
	require.NoError(t, err)
	counter := &storeReadCounter{Runtime: rt}
	c = serveACPOn(t, counter)
	_, err = c.conn.Initialize(bgCtx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	require.NoError(t, err)
	_, err = c.conn.LoadSession(bgCtx, sdk.LoadSessionRequest{SessionId: id, Cwd: dir, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	require.Contains(t, c.taken(t), `{"content":{"text":"hi there","type":"text"},"sessionUpdate":"agent_message_chunk"}`)
	require.Zero(t, counter.storeReads.Load(), "History calls that read the stored log besides the resume")
	c.close(t)
	require.NoError(t, rt.Close())
}

// serveACPOn serves one ACP client over pipes on rt until the test closes
// its stdin.
func serveACPOn(t *testing.T, rt acpRuntime) *acpClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &acpClient{stdin: inW, exited: make(chan int, 1), more: make(chan struct{}, 1)}
	go func() {
		serveACP(context.Background(), rt, inR, outW, slog.New(slog.DiscardHandler))
		_ = outW.Close()
		c.exited <- 0
	}()
	c.conn = sdk.NewClientSideConnection(c, inW, outR)
	c.conn.SetLogger(slog.New(slog.DiscardHandler))
	return c
}
