package dsh

import (
	"testing"

	"github.com/stretchr/testify/require"

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
