//go:build !go1.26

package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// artifactDir is where the browser test saves its screenshots before Go
// 1.26 (no T.ArtifactDir): $DSH_ACTORS_ARTIFACTS/<test name> when set, else
// a temporary directory removed after the test.
func artifactDir(t *testing.T) string {
	root := os.Getenv("DSH_ACTORS_ARTIFACTS")
	if root == "" {
		return t.TempDir()
	}
	dir := filepath.Join(root, t.Name())
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}
