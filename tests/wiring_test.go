package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// initAllowed lists the product files that still register an
// implementation from init(), each to be removed: the test fails when a
// file outside the list gains an init() and when a listed file no longer
// has one (take it off the list).
var initAllowed = []string{}

// hookAllowed lists the product files that still declare a package-level
// func variable over any (a func(any) accessor another package sets), each
// to be removed, with the same two rules as initAllowed.
var hookAllowed = []string{}

// No product code registers an implementation into another package from
// init() or hands one over through a func(any) variable: a lower package
// declares an interface and a higher one implements it.
func TestNoHiddenWiringInProductCode(t *testing.T) {
	inits, hooks := hiddenWiring(t, moduleRoot(t))
	require.ElementsMatch(t, initAllowed, inits, "product files with an init() (the allowed list only shrinks)")
	require.ElementsMatch(t, hookAllowed, hooks, "product files with a package-level func(any) variable (the allowed list only shrinks)")
}

func TestTheWiringCheckerCatchesViolations(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		path := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	}
	write("a/a.go", "package a\n\nfunc init() {}\n")
	write("a/a_test.go", "package a\n\nfunc init() {}\n\nvar Hook func(any)\n")
	write("b/b.go", "package b\n\nvar (\n\tHook func(x any) int\n\tplain func(int)\n)\n\nfunc (T) init() {}\n\ntype T struct{}\n")
	write("c/c.go", "package c\n\nvar iface func() interface{}\n")
	write("testdata/d.go", "package d\n\nfunc init() {}\n")
	inits, hooks := hiddenWiring(t, root)
	require.Equal(t, []string{"a/a.go"}, inits, "a method named init and test files do not count")
	require.Equal(t, []string{"b/b.go", "c/c.go"}, hooks, "func variables over any count; over concrete types do not")
}

// hiddenWiring returns the non-test Go files under root (relative, sorted)
// that declare a top-level init() and those that declare a package-level
// func variable whose parameters or results include any.
func hiddenWiring(t *testing.T, root string) (inits, hooks []string) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if declaresInit(file) {
			inits = append(inits, rel)
		}
		if declaresAnyHook(file) {
			hooks = append(hooks, rel)
		}
		return nil
	})
	require.NoError(t, err)
	slices.Sort(inits)
	slices.Sort(hooks)
	return inits, hooks
}

func declaresInit(file *ast.File) bool {
	for _, decl := range file.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
			return true
		}
	}
	return false
}

func declaresAnyHook(file *ast.File) bool {
	for _, decl := range file.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.VAR {
			continue
		}
		for _, spec := range gen.Specs {
			if fn, ok := spec.(*ast.ValueSpec).Type.(*ast.FuncType); ok && mentionsAny(fn) {
				return true
			}
		}
	}
	return false
}

// mentionsAny reports whether a func type's parameters or results include
// any (or interface{}).
func mentionsAny(fn *ast.FuncType) bool {
	found := false
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			found = found || n.Name == "any"
		case *ast.InterfaceType:
			found = found || len(n.Methods.List) == 0
		}
		return !found
	})
	return found
}

// harnesses are the module's test harness packages: only tests import
// them (modelagenttest, the public mock model server, is itself one and
// builds on llmtest).
var harnesses = []string{
	"internal/faultfs",
	"internal/llmtest",
	"internal/pgtest",
	"internal/storetest",
	"internal/testkit",
	"modelagent/modelagenttest",
}

// No product package imports a test harness, and every package whose
// product code imports "testing" or testify is a harness: test code is not
// compiled into the product.
func TestTestHarnessesAreImportedOnlyByTests(t *testing.T) {
	require.Empty(t, harnessViolations(productImports(t)))
}

func TestTheHarnessCheckerCatchesViolations(t *testing.T) {
	imports := map[string][]string{
		"host":                      {"internal/pgtest"},
		"internal/bench":            {"testing"},
		"internal/storetest":        {"testing", "github.com/stretchr/testify/require"},
		"modelagent/modelagenttest": {"internal/llmtest"},
		"query":                     {"session"},
	}
	require.Equal(t, []string{
		"host imports the test harness internal/pgtest",
		"internal/bench imports testing but is not a test harness",
	}, harnessViolations(imports))
}

// harnessViolations lists, sorted, each product package importing a
// harness and each non-harness importing testing or testify.
func harnessViolations(imports map[string][]string) []string {
	var out []string
	for pkg, imps := range imports {
		harness := slices.Contains(harnesses, pkg)
		for _, imp := range imps {
			switch {
			case !harness && slices.Contains(harnesses, imp):
				out = append(out, pkg+" imports the test harness "+imp)
			case !harness && (imp == "testing" || strings.HasPrefix(imp, "github.com/stretchr/testify")):
				out = append(out, pkg+" imports "+imp+" but is not a test harness")
			}
		}
	}
	slices.Sort(out)
	return out
}

// productImports maps each package of the module (relative to it) to the
// packages its non-test code imports directly, the module's relative.
func productImports(t *testing.T) map[string][]string {
	t.Helper()
	imports := map[string][]string{}
	for line := range strings.Lines(goList(t, "{{.ImportPath}} {{join .Imports \" \"}}")) {
		fields := strings.Fields(line)
		if len(fields) == 0 || !inModule(fields[0]) {
			continue
		}
		rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }
		for _, imp := range fields[1:] {
			imports[rel(fields[0])] = append(imports[rel(fields[0])], rel(imp))
		}
	}
	require.Contains(t, imports, "query", "go list found the module's packages")
	return imports
}
