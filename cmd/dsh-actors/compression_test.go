package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckCompression(t *testing.T) {
	for _, ok := range []string{"", "zstd", "none"} {
		require.NoError(t, checkCompression(ok))
	}
	require.EqualError(t, checkCompression("gzip"), `--compression: compression must be "zstd" or "none", got "gzip"`)
}
