//go:build go1.26

package host

import "testing"

// artifactDir is where the browser test saves its screenshots: the test's
// artifact directory, kept under -outputdir when go test runs with
// -artifacts (otherwise a temporary directory removed after the test).
func artifactDir(t *testing.T) string { return t.ArtifactDir() }
