package dsh

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
)

// An ACP agent named like a provider taken fails Open by code, naming
// it; Delegate refuses an unknown provider and a nil parent by code.
func TestACPAgentsRegisterAndDelegateRefuses(t *testing.T) {
	_, err := Open(Options{Dir: t.TempDir(), ACPAgents: []ACPAgent{{Name: "spawn", Command: "true"}}})
	require.ErrorIs(t, err, fault.DuplicateProvider)
	require.ErrorContains(t, err, "ACP agent spawn")

	rt := open(t, Options{Dir: t.TempDir(), ACPAgents: []ACPAgent{{Name: "ex", Command: "true"}}})
	p, err := rt.StartAgent(bg, "p")
	require.NoError(t, err)
	_, err = rt.Delegate(bg, p, "nobody", event.Text("hi"))
	require.ErrorIs(t, err, fault.NoProvider)
	_, err = rt.Delegate(bg, nil, "ex", event.Text("hi"))
	require.ErrorIs(t, err, fault.Unauthorized)
}

// failingACPAgent is a shell ACP agent that initializes, opens a session
// and answers every prompt with a JSON-RPC error naming "boom".
const failingACPAgent = `while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{}}}\n' "$id" ;;
    *'"method":"session/new"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"s1"}}\n' "$id" ;;
    *'"method":"session/prompt"'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"boom"}}\n' "$id" ;;
  esac
done`

// A turn an ACP agent fails ends its run with the stop reason error, and
// the failure reaches Options.Logger rather than vanishing.
func TestAnACPTurnFailureReachesTheLogger(t *testing.T) {
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rt := open(t, Options{Dir: t.TempDir(), Logger: logger,
		ACPAgents: []ACPAgent{{Name: "failing", Command: "sh", Args: []string{"-c", failingACPAgent}, Dir: t.TempDir()}}})
	p, err := rt.StartAgent(bg, "p")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(bg, time.Minute)
	defer cancel()
	end, err := rt.Delegate(ctx, p, "failing", event.Text("hi"))
	require.NoError(t, err)
	require.Equal(t, agent.Error, end.StopReason)
	require.Contains(t, logs.String(), `subagent/acp \"failing\": the agent's turn failed`)
	require.Contains(t, logs.String(), "boom")
}
