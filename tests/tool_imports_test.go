package tests

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// cliTools are the packages of the CLI's tool commands: the measurement
// loops of `dsh-actors bench`, the synthetic stores they list and the
// randomized workload of `dsh-actors stress`. The CLI and the other tools
// import them; no other product package does.
var cliTools = []string{"internal/bench", "internal/storegen", "internal/stress"}

// toolMayImport are the module packages a tool is written with: what the
// CLI may import, the other tools, and the dispatcher the runtime runs its
// actors on (a leaf package), so that a floor's actors run as the
// runtime's do.
var toolMayImport = slices.Concat(cliMayImport, cliTools, []string{"internal/dispatch", "internal/cpuclock"})

// toolImportsLeft are the module packages beyond toolMayImport that a tool
// still imports (measurements not yet rewritten on the root). No package
// may join a list; drop one once the tool no longer imports it.
var toolImportsLeft = map[string][]string{
	"internal/bench":    {},
	"internal/storegen": {},
	"internal/stress":   {},
}

// TestToolsImportOnlyWhatTheCLIMay: the non-test files of each CLI tool
// import no module package outside toolMayImport, except those still
// listed in toolImportsLeft; and no product package but the CLI imports a
// tool.
func TestToolsImportOnlyWhatTheCLIMay(t *testing.T) {
	for _, tool := range cliTools {
		foreign := importsOutside(t, filepath.Join("..", filepath.FromSlash(tool)), toolMayImport)
		require.Subset(t, toolImportsLeft[tool], foreign, "%s imports a module package beyond the root, host and modelagent", tool)
		for _, left := range toolImportsLeft[tool] {
			if !slices.Contains(foreign, left) {
				t.Logf("toolImportsLeft names %q for %s, which no longer imports it: drop it", left, tool)
			}
		}
	}
	for pkg, imports := range productImports(t) {
		for _, tool := range cliTools {
			if slices.Contains(imports, tool) {
				require.Contains(t, append([]string{"cmd/dsh-actors"}, cliTools...), pkg, "product package %s imports the tool %s", pkg, tool)
			}
		}
	}
}

// TestTheToolImportCheckFindsAForeignPackage checks the checker on a
// package written for it.
func TestTheToolImportCheckFindsAForeignPackage(t *testing.T) {
	dir := t.TempDir()
	src := `package bench

import (
	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/stress"
)
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bench.go"), []byte(src), 0o600))
	require.Equal(t, []string{"actors/manager"}, importsOutside(t, dir, toolMayImport))
}
