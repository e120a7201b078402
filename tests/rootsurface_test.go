package tests

import (
	"go/ast"
	"go/parser"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rootMayName are the module packages the root package's exported
// signatures may name besides its own types: what an embedder writes an
// agent with (agent, event), matches errors with (fault) and configures
// model agents with (modelagent).
var rootMayName = []string{"agent", "event", "fault", "modelagent"}

// TestRootSignaturesNameOnlyTheEmbeddersPackages: every exported
// declaration of the root names only the root's own types, the standard
// library and rootMayName.
func TestRootSignaturesNameOnlyTheEmbeddersPackages(t *testing.T) {
	require.Empty(t, namingOthers(t, ".."))
}

// TestRootSignatureCheckFindsAForeignPackage checks the checker on a
// package written for it.
func TestRootSignatureCheckFindsAForeignPackage(t *testing.T) {
	dir := t.TempDir()
	src := `package sample

import (
	"context"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/session"
	q "github.com/dsh-actors/dsh-actors/query"
)

type Options struct {
	Store session.Store
	Agent agent.Factory
	hidden session.Store
}

type Runtime struct{}

func (r *Runtime) Entries(ctx context.Context) []q.Entry { return nil }
func (r *Runtime) run(q.Entry)                             {}
func Open(Options) (*Runtime, error)                       { return nil, nil }
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sample.go"), []byte(src), 0o600))
	require.Equal(t, []string{"Options.Store", "Runtime.Entries"}, namingOthers(t, dir))
}

// namingOthers parses the non-test Go files of the package in dir and
// returns, sorted, its exported declarations (top-level names, methods of
// exported types, fields of exported structs) that name a package of this
// module outside rootMayName.
func namingOthers(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	for _, file := range nonTestFiles(t, dir, parser.SkipObjectResolution) {
		found = append(found, foreignIn(file)...)
	}
	slices.Sort(found)
	return found
}

// foreignIn lists the exported declarations of file naming a foreign
// module package.
func foreignIn(file *ast.File) []string {
	foreign := foreignImports(file)
	var found []string
	check := func(name string, n ast.Node) {
		if mentions(n, foreign) {
			found = append(found, name)
		}
	}
	for _, decl := range file.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			name, ok := exportedFuncName(decl)
			if ok {
				check(name, decl.Type)
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				foreignInSpec(spec, check)
			}
		}
	}
	return found
}

// foreignInSpec checks one type, var or const spec: a struct type field by
// field, an interface method by method, anything else whole.
func foreignInSpec(spec ast.Spec, check func(string, ast.Node)) {
	switch spec := spec.(type) {
	case *ast.TypeSpec:
		if !spec.Name.IsExported() {
			return
		}
		if st, ok := spec.Type.(*ast.StructType); ok {
			for _, field := range st.Fields.List {
				for _, name := range field.Names {
					if name.IsExported() {
						check(spec.Name.Name+"."+name.Name, field.Type)
					}
				}
			}
			return
		}
		check(spec.Name.Name, spec.Type)
	case *ast.ValueSpec:
		for _, name := range spec.Names {
			if name.IsExported() {
				check(name.Name, spec)
			}
		}
	}
}

// exportedFuncName is Name or Recv.Name of an exported function or of an
// exported method of an exported type.
func exportedFuncName(decl *ast.FuncDecl) (string, bool) {
	if !decl.Name.IsExported() {
		return "", false
	}
	if decl.Recv == nil {
		return decl.Name.Name, true
	}
	recv := receiverName(decl.Recv.List[0].Type)
	return recv + "." + decl.Name.Name, ast.IsExported(recv)
}

// foreignImports are the local names of file's imports of this module's
// packages other than rootMayName.
func foreignImports(file *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, imp := range file.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		rel, ok := strings.CutPrefix(path, module+"/")
		if !ok || slices.Contains(rootMayName, rel) {
			continue
		}
		name := path[strings.LastIndexByte(path, '/')+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = true
	}
	return names
}
