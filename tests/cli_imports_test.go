package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// cliMayImport are the module packages the CLI is written with: the root
// package (""), the web host and the model agents, and the packages an
// embedder writes agents and matches errors with.
var cliMayImport = []string{"", "host", "modelagent", "agent", "event", "fault"}

// TestTheCLIImportsOnlyTheRootHostAndModelAgents: the non-test files of
// cmd/dsh-actors import no module package outside cliMayImport and the
// CLI's tools (which TestToolsImportOnlyWhatTheCLIMay holds to the same).
func TestTheCLIImportsOnlyTheRootHostAndModelAgents(t *testing.T) {
	foreign := slices.DeleteFunc(cliForeignImports(t, filepath.Join("..", "cmd", "dsh-actors")),
		func(pkg string) bool { return slices.Contains(cliTools, pkg) })
	require.Empty(t, foreign, "the CLI imports a module package beyond the root, host and modelagent")
}

// TestTheCLIImportCheckFindsAForeignPackage checks the checker on a
// package written for it.
func TestTheCLIImportCheckFindsAForeignPackage(t *testing.T) {
	dir := t.TempDir()
	src := `package main

import (
	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/host"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main_test.go"), []byte("package main\n\nimport _ \"github.com/dsh-actors/dsh-actors/query\"\n"), 0o600))
	require.Equal(t, []string{"session"}, cliForeignImports(t, dir))
}

// cliForeignImports are the module packages (relative to the module, ""
// for the root) that the non-test Go files in dir import outside
// cliMayImport, sorted and without repeats.
func cliForeignImports(t *testing.T, dir string) []string {
	t.Helper()
	return importsOutside(t, dir, cliMayImport)
}

// importsOutside are the module packages (relative to the module, "" for
// the root) that the non-test Go files in dir import outside allowed,
// sorted and without repeats.
func importsOutside(t *testing.T, dir string, allowed []string) []string {
	t.Helper()
	var found []string
	for _, file := range nonTestFiles(t, dir, parser.ImportsOnly) {
		for _, imp := range file.Imports {
			importPath, _ := strconv.Unquote(imp.Path.Value)
			rel, inModule := strings.CutPrefix(importPath+"/", module+"/")
			rel = strings.TrimSuffix(rel, "/")
			if inModule && !slices.Contains(allowed, rel) {
				found = append(found, rel)
			}
		}
	}
	slices.Sort(found)
	return slices.Compact(found)
}

// nonTestFiles parses the non-test Go files in dir with mode.
func nonTestFiles(t *testing.T, dir string, mode parser.Mode) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var files []*ast.File
	fset := token.NewFileSet()
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, path, nil, mode)
		require.NoError(t, err)
		files = append(files, file)
	}
	return files
}
