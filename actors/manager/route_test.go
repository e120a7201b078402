package manager

import (
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
