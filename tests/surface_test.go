package tests

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// protoactorPath is the import path prefix of the actor library; an
// exported declaration that mentions one of its packages leaks it to
// embedders.
const protoactorPath = "github.com/asynkron/protoactor-go"

// internalPath is the import path prefix of the module's internal
// packages; an exported declaration that mentions one of them names a type
// an embedder cannot name.
const internalPath = module + "/internal/"

// surfaceTarget is the most exported identifiers the public surface
// should have.
const surfaceTarget = 425

// surfaceRatchet is the most exported identifiers the public surface may
// have today: the figure the last reduction reached. Lower it when the
// count falls; an addition that pushes the count above it must take
// something else off the surface.
const surfaceRatchet = 907

// maxErrorStructs is the most exported …Error struct types: fault.Error,
// the one error shape (a failed model call's facts, internal/llm's Error,
// are off the surface).
const maxErrorStructs = 1

// internalRatchet is the most exported declarations of public packages
// that may name a type of an internal package today. Lower it as they are
// fixed.
const internalRatchet = 6

// surface is what one package exports.
type surface struct {
	dir string
	// identifiers counts exported top-level names, exported methods
	// (interface methods included) and exported struct fields of exported
	// types.
	identifiers int
	// protoactor names the exported declarations whose signature or type
	// mentions a protoactor package.
	protoactor []string
	// internal names the exported declarations whose signature or type
	// mentions a package under internal/.
	internal []string
	// errorStructs names the exported struct types whose name ends in Error.
	errorStructs []string
}

// TestExportedSurface counts, per package outside internal/, cmd/ and
// tests/, what an embedder can name (non-test files only), and logs the
// figures. It asserts that no exported declaration mentions a protoactor
// type, that at most two …Error structs are exported, and that the count
// and the declarations naming an internal package stay at or below their
// ratchets.
func TestExportedSurface(t *testing.T) {
	surfaces := exportedSurface(t, "..")
	total, protoactor, internal, errorStructs := 0, 0, 0, 0
	for _, s := range surfaces {
		total += s.identifiers
		protoactor += len(s.protoactor)
		internal += len(s.internal)
		errorStructs += len(s.errorStructs)
		t.Logf("%-22s %4d exported, %d naming protoactor %v, %d naming internal/ %v, %d error structs %v",
			s.dir, s.identifiers, len(s.protoactor), s.protoactor, len(s.internal), s.internal, len(s.errorStructs), s.errorStructs)
	}
	t.Logf("total: %d exported identifiers in %d packages (target %d), %d naming a protoactor type, %d naming an internal package, %d exported …Error struct types",
		total, len(surfaces), surfaceTarget, protoactor, internal, errorStructs)
	require.Zero(t, protoactor, "exported declarations naming a protoactor type")
	require.LessOrEqual(t, internal, internalRatchet, "exported declarations naming an internal package (the ratchet)")
	require.LessOrEqual(t, errorStructs, maxErrorStructs, "exported …Error struct types")
	require.LessOrEqual(t, total, surfaceRatchet, "exported identifiers (the ratchet; the target is %d)", surfaceTarget)
	if total > surfaceTarget {
		t.Logf("not yet reached: %d exported identifiers, target %d", total, surfaceTarget)
	}
}

// TestExportedSurfaceCounter checks the counter on a package written for
// it, so that a change to the counting rules is seen.
func TestExportedSurfaceCounter(t *testing.T) {
	root := t.TempDir()
	src := `package sample

import (
	"fmt"
	pa "github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

const A, b = 1, 2

var V = 3

type T struct {
	F, G int
	h    int
	PID  *pa.PID
	End  []vocab.TurnEnd
	fmt.Stringer
}

func (T) M()   {}
func (T) m()   {}
func (*T) N()  {}
func (u) X()   {}

type u struct{ Z int }

type I interface {
	Do() int
	hidden()
}

type BadError struct{ Msg string }

type NotAnError = error

func Spawn(ctx *pa.RootContext) {}

func Encode(p vocab.Payload) error { return nil }

type Payload = vocab.Payload

var Last vocab.TurnEnd

func helper() {}
`
	dir := filepath.Join(root, "sample")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sample.go"), []byte(src), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sample_test.go"), []byte("package sample\n\nfunc Exported() {}\n"), 0o644))
	surfaces := exportedSurface(t, root)
	require.Len(t, surfaces, 1)
	s := surfaces[0]
	// A V T F G PID End Stringer M N I Do BadError Msg NotAnError Spawn
	// Encode Payload Last
	require.Equal(t, 19, s.identifiers)
	require.Equal(t, []string{"Spawn", "T.PID"}, s.protoactor)
	require.Equal(t, []string{"Encode", "Last", "Payload", "T.End"}, s.internal)
	require.Equal(t, []string{"BadError"}, s.errorStructs)
}

// exportedSurface parses every non-test Go file under root outside
// internal/, cmd/, tests/ and testdata/ and counts each package's exports,
// in directory order.
func exportedSurface(t *testing.T, root string) []surface {
	t.Helper()
	byDir := map[string]*surface{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if skippedDir(rel, d.Name()) {
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
		dir := filepath.ToSlash(filepath.Dir(rel))
		s := byDir[dir]
		if s == nil {
			s = &surface{dir: dir}
			byDir[dir] = s
		}
		s.add(file)
		return nil
	})
	require.NoError(t, err)
	surfaces := make([]surface, 0, len(byDir))
	for _, s := range byDir {
		slices.Sort(s.protoactor)
		slices.Sort(s.internal)
		slices.Sort(s.errorStructs)
		surfaces = append(surfaces, *s)
	}
	slices.SortFunc(surfaces, func(a, b surface) int { return strings.Compare(a.dir, b.dir) })
	return surfaces
}

func skippedDir(rel, name string) bool {
	switch rel {
	case ".":
		return false
	case "internal", "cmd", "tests":
		return true
	}
	return name == "testdata" || strings.HasPrefix(name, ".")
}

// imported holds the local names under which a file imports the packages
// an exported declaration must not mention.
type imported struct {
	protoactor, internal map[string]bool
}

// add counts one file's exported declarations.
func (s *surface) add(file *ast.File) {
	imp := imported{protoactor: importNames(file, protoactorPath), internal: importNames(file, internalPath)}
	for _, decl := range file.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			s.addFunc(decl, imp)
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				s.addSpec(spec, imp)
			}
		}
	}
}

// check records the exported declaration name when expr mentions a
// protoactor or an internal package.
func (s *surface) check(name string, expr ast.Node, imp imported) {
	if mentions(expr, imp.protoactor) {
		s.protoactor = append(s.protoactor, name)
	}
	if mentions(expr, imp.internal) {
		s.internal = append(s.internal, name)
	}
}

func (s *surface) addFunc(decl *ast.FuncDecl, imp imported) {
	if !decl.Name.IsExported() {
		return
	}
	name := decl.Name.Name
	if decl.Recv != nil {
		recv := receiverName(decl.Recv.List[0].Type)
		if !ast.IsExported(recv) {
			return
		}
		name = recv + "." + name
	}
	s.identifiers++
	s.check(name, decl.Type, imp)
}

func (s *surface) addSpec(spec ast.Spec, imp imported) {
	switch spec := spec.(type) {
	case *ast.ValueSpec:
		for _, n := range spec.Names {
			if n.IsExported() {
				s.identifiers++
				if spec.Type != nil {
					s.check(n.Name, spec.Type, imp)
				}
			}
		}
	case *ast.TypeSpec:
		if !spec.Name.IsExported() {
			return
		}
		s.identifiers++
		s.addMembers(spec.Name.Name, spec.Type, imp)
		if _, isStruct := spec.Type.(*ast.StructType); isStruct && spec.Assign == 0 && strings.HasSuffix(spec.Name.Name, "Error") {
			s.errorStructs = append(s.errorStructs, spec.Name.Name)
		}
		if _, composite := spec.Type.(*ast.StructType); !composite && !isInterface(spec.Type) {
			s.check(spec.Name.Name, spec.Type, imp)
		}
	}
}

// addMembers counts the exported fields of a struct type and the exported
// methods of an interface type.
func (s *surface) addMembers(typeName string, expr ast.Expr, imp imported) {
	var fields *ast.FieldList
	switch expr := expr.(type) {
	case *ast.StructType:
		fields = expr.Fields
	case *ast.InterfaceType:
		fields = expr.Methods
	default:
		return
	}
	for _, field := range fields.List {
		names := field.Names
		if len(names) == 0 { // embedded: named by its type
			names = []*ast.Ident{ast.NewIdent(receiverName(field.Type))}
		}
		for _, n := range names {
			if n.IsExported() {
				s.identifiers++
				s.check(typeName+"."+n.Name, field.Type, imp)
			}
		}
	}
}

func isInterface(expr ast.Expr) bool {
	_, ok := expr.(*ast.InterfaceType)
	return ok
}

// importNames is the set of local names under which file imports a
// package whose path starts with prefix.
func importNames(file *ast.File, prefix string) map[string]bool {
	names := map[string]bool{}
	for _, imp := range file.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !strings.HasPrefix(path, prefix) {
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

// mentions reports whether expr names a type from one of the packages in
// pkgNames.
func mentions(expr ast.Node, pkgNames map[string]bool) bool {
	found := false
	ast.Inspect(expr, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkgNames[pkg.Name] {
				found = true
			}
		}
		return !found
	})
	return found
}

// receiverName is the type name of a receiver or embedded field: T, *T,
// T[P], pkg.T.
func receiverName(expr ast.Expr) string {
	switch expr := expr.(type) {
	case *ast.StarExpr:
		return receiverName(expr.X)
	case *ast.IndexExpr:
		return receiverName(expr.X)
	case *ast.IndexListExpr:
		return receiverName(expr.X)
	case *ast.SelectorExpr:
		return expr.Sel.Name
	case *ast.Ident:
		return expr.Name
	}
	return fmt.Sprintf("%T", expr)
}

// maxCitingLines is the most comment lines that may cite documents outside
// this repository.
const maxCitingLines = 20

// citation matches what a comment uses to cite a document outside this
// repository: a Markdown file, a numbered section, a TypeScript file, the
// reference documents by name, the specification's notes, the design
// notes and the project's issues by number.
var citation = regexp.MustCompile(`(reference/|[A-Za-z0-9_-]+\.md\b|\.tsx?\b|web-host|session-store|subagent-runtime|model-tools|seed[- ]era|seed-?[0-9]{3}|seeds? [0-9]{3}|the seeds\b|the reference's|\bissue #?[0-9]+\b|§|DESIGN|PLAN\b)`)

// TestCommentsExplainTheCode: comments explain the code instead of citing
// documents outside the repository; Markdown files of this repository
// (docs/, README.md) may be named.
func TestCommentsExplainTheCode(t *testing.T) {
	lines := citingLines(t, "..")
	for _, l := range lines {
		t.Log(l)
	}
	t.Logf("%d comment lines cite documents outside the repository (at most %d)", len(lines), maxCitingLines)
	require.LessOrEqual(t, len(lines), maxCitingLines)
}

// TestCitingLinesAreFound checks the citation finder on a file written for
// it.
func TestCitingLinesAreFound(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "docs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "docs", "wire.md"), nil, 0o644))
	c := "/" + "/" // so that this file's own lines do not match
	src := "package p\n\n" + c + " as seed-era.md \u00a72 says\n" + c + " see docs/wire.md\n" + c + " the original's handler.ts\n" +
		"var x = \"web-host\" " + c + " web-host\n" + c + " a fork seed\n" +
		c + " where the seeds leave room\n" + c + " in the reference's order\n" + c + " the store of issue 2\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, "p.go"), []byte(src), 0o644))
	require.Equal(t, []string{"p.go:3", "p.go:5", "p.go:6", "p.go:8", "p.go:9", "p.go:10"}, citingLines(t, root))
}

// citingLines lists file:line of every comment line in a Go file under root
// that cites a document outside the repository.
func citingLines(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for i, line := range strings.Split(string(data), "\n") {
			_, comment, ok := strings.Cut(line, "//")
			if ok && citesOutside(root, comment) {
				found = append(found, fmt.Sprintf("%s:%d", filepath.ToSlash(rel), i+1))
			}
		}
		return nil
	})
	require.NoError(t, err)
	return found
}

// citesOutside reports whether comment cites something outside the
// repository: a citation that is not the name of one of its own Markdown
// files.
func citesOutside(root, comment string) bool {
	for _, m := range citation.FindAllString(comment, -1) {
		if !strings.HasSuffix(m, ".md") || !repositoryMarkdown(root, m) {
			return true
		}
	}
	return false
}

// repositoryMarkdown reports whether the Markdown file name is a file of
// the repository (at the root or under docs/).
func repositoryMarkdown(root, name string) bool {
	for _, candidate := range []string{name, filepath.Join("docs", name)} {
		if _, err := os.Stat(filepath.Join(root, candidate)); err == nil {
			return true
		}
	}
	return false
}
