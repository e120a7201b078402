package index

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests, or, re-executed by
// TestTwoProcessesOnOneStoreKeepItConsistent with peerEnv set, is the
// second process using the same store, or, re-executed by
// TestACrashMidBuildLeavesNoHalfIndex with crashEnv set, the process that
// dies building the index.
func TestMain(m *testing.M) {
	if root := os.Getenv(peerEnv); root != "" {
		os.Exit(runPeer(root))
	}
	if root := os.Getenv(crashEnv); root != "" {
		os.Exit(runCrashingBuild(root))
	}
	goleak.VerifyTestMain(m)
}
