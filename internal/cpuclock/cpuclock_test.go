//go:build unix

package cpuclock

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Spinning on this goroutine moves the process's CPU time forward.
func TestProcessGrowsWithWork(t *testing.T) {
	before := Process()
	for Process() == before {
		spin()
	}
	require.Greater(t, Process(), before)
}

func spin() {
	x := 0
	for i := range 1_000_000 {
		x += i
	}
	_ = x
}
