package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/session"
)

func TestParseCompression(t *testing.T) {
	for _, c := range []struct {
		in   string
		want session.Compression
	}{{"zstd", session.CompressionZstd}, {"none", session.CompressionNone}} {
		got, err := parseCompression(c.in)
		require.NoError(t, err)
		require.Equal(t, c.want, got)
		require.Equal(t, c.in, got.String())
	}
	_, err := parseCompression("gzip")
	require.EqualError(t, err, `compression must be "zstd" or "none", got "gzip"`)
}
