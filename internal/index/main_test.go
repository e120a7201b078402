package index

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests, or, re-executed by
// TestTwoProcessesOnOneStoreKeepItConsistent with peerEnv set, is the
// second process using the same store.
func TestMain(m *testing.M) {
	if root := os.Getenv(peerEnv); root != "" {
		os.Exit(runPeer(root))
	}
	goleak.VerifyTestMain(m)
}
