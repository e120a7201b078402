package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A small stress run passes every invariant and ends with the summary.
func TestStressSummaryLine(t *testing.T) {
	code, stdout, stderr := run(t, "stress", "--forests", "2", "--fanout", "2", "--depth", "2", "--followups", "40", "--seed", "3")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Regexp(t, `^stress: activations=\d+ children=\d+ followups=\d+/\d+ .* violations=0 leaked_goroutines=0$`, lines[len(lines)-1])
}

func TestStressRejectsBadSizes(t *testing.T) {
	code, _, stderr := run(t, "stress", "--fanout", "0")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--fanout must be at least 1")
}
