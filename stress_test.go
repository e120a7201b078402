package dsh_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/internal/faultfs"
	"github.com/dsh-actors/dsh-actors/internal/stress"
)

// With the store's disk filling up during the stress run's race, every
// accepted follow-up is still accounted for: logged, discarded, or
// reported lost by an error line naming it (which also holds the stress
// harness's copy of that line's text to the runtime's).
func TestStressAccountsForEveryFollowupOnAFullDisk(t *testing.T) {
	faults := faultfs.New(nil)
	cfg := stress.Config{Forests: 2, Fanout: 2, Depth: 2, Followups: 150, Seed: 5,
		Open:       func(opts dsh.Options) (*dsh.Runtime, error) { return dsh.OpenOnFS(opts, faults) },
		AfterGrown: func() { faults.FillAfter(30) }}
	var report stress.Report
	synctest.Test(t, func(*testing.T) { report, _ = stress.Run(context.Background(), cfg) })
	for _, v := range report.Violations {
		require.NotContains(t, v, "neither logged", report.String())
	}
	require.Equal(t, report.Accepted, report.Logged+report.Discarded+report.Lost)
	require.Positive(t, report.Lost+report.Discarded, report.String())
	t.Log(report, report.Violations)
}
