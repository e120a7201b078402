package host

import (
	"context"
	"fmt"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// TestClassifyMapsSubagentDeliveryFailures: ACTIVATION_CLOSING and DRAINING are "not delivered"; every other
// continuation failure the host does not name stays unclassified (internal).
func TestClassifyMapsSubagentDeliveryFailures(t *testing.T) {
	cases := []struct {
		err  error
		want fault.Code // "": not classified, reported as internal
	}{
		{fault.NotResumable, codeSubagentNotResumable},
		{fault.Unauthorized, codeSubagentUnauthorized},
		{fault.Draining, codeSubagentNotDelivered},
		{fault.ActivationClosing, codeSubagentNotDelivered},
		{fault.Cancelled, codeCancelled},
		{fault.ContinuationUnavailable, ""},
		{fault.PersistenceUnavailable, ""},
		{fault.DurabilityFailed, ""},
	}
	for _, tc := range cases {
		t.Run(tc.err.Error(), func(t *testing.T) {
			got := classify(context.Background(), fmt.Errorf("followup: %w", tc.err))
			require.ErrorIs(t, got, tc.err, "the cause is kept")
			if tc.want == "" {
				require.Empty(t, fault.CodeOf(got), "classified as %v", got)
				return
			}
			require.Equal(t, tc.want, fault.CodeOf(got))
			require.ErrorIs(t, got, tc.want)
		})
	}
}

func TestSessionBlankMeansNoTurnStartYet(t *testing.T) {
	event := func(typ string) session.Event { return session.Event{Type: typ} }
	require.True(t, sessionBlank(nil))
	require.True(t, sessionBlank([]session.Event{event("subagent/descriptor"), event("session/end-seed")}),
		"a new child holds its descriptor but has run no turn")
	require.False(t, sessionBlank([]session.Event{event("subagent/descriptor"), event("turn/start"), event("user/message")}))
}
