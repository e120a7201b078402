package manager

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// The routing decision reads only what the actor knows of a child: its
// resident epoch (disposing or not), whether another process was last
// found holding it, and whether the epoch's lease was fenced.
func TestDecideRoute(t *testing.T) {
	resident := &activation{}
	disposing := &activation{disposal: &disposal{}}
	for _, c := range []struct {
		name      string
		a         *activation
		elsewhere bool
		fenced    bool
		want      route
	}{
		{"absent", nil, false, false, routeAbsent},
		{"held by another process", nil, true, false, routeElsewhere},
		{"resident", resident, false, false, routeResident},
		{"resident, once thought elsewhere", resident, true, false, routeResident},
		{"being disposed", disposing, false, false, routeAfterDisposal},
		{"being disposed and fenced", disposing, false, true, routeAfterDisposal},
		{"fenced", resident, false, true, routeDisposeFenced},
	} {
		require.Equal(t, c.want, decideRoute(c.a, c.elsewhere, c.fenced), c.name)
	}
}

// After a disposal it waited for, an op that was still materializing
// reports its rollback's failure, one that carries a failed admission
// reports it, and any other runs again.
func TestDecideAfterDisposal(t *testing.T) {
	failed := errors.New("refused")
	require.Equal(t, rollbackDone, decideAfterDisposal(true, failed))
	require.Equal(t, rollbackDone, decideAfterDisposal(true, nil))
	require.Equal(t, reportFailed, decideAfterDisposal(false, failed))
	require.Equal(t, retryOp, decideAfterDisposal(false, nil))
}

// A woken resident child gets its pending messages unless a drain closes
// it; then it is disposed (and woken again) if it is still the current
// epoch with no disposal open, else the wake is done.
func TestDecideWokenResident(t *testing.T) {
	require.Equal(t, wokenReplay, decideWokenResident(false, true))
	require.Equal(t, wokenReplay, decideWokenResident(false, false))
	require.Equal(t, wokenDispose, decideWokenResident(true, true))
	require.Equal(t, wokenDone, decideWokenResident(true, false))
}
