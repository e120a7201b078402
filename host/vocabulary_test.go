package host

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

var updateVocabulary = flag.Bool("update-vocabulary", false, "rewrite web/vocabulary.js from the log vocabulary's constants and the host's frame names")

// The files the page's constants are read from: the log vocabulary's
// event types, kinds and chunk types, and the content and message kinds
// of package event.
var (
	vocabTypes  = filepath.Join("..", "internal", "vocab", "types.go")
	vocabChunks = filepath.Join("..", "internal", "vocab", "chunk.go")
	eventTypes  = filepath.Join("..", "event", "types.go")
)

// vocabularyGroups names the JavaScript object each constant prefix of
// the file goes into.
var vocabularyGroups = []struct{ file, prefix, object string }{
	{vocabTypes, "Type", "EventType"},
	{vocabTypes, "Reason", "ReasonKind"},
	{vocabTypes, "Trigger", "TriggerKind"},
	{eventTypes, "Block", "BlockType"},
	{eventTypes, "Role", "Role"},
	{eventTypes, "Source", "SourceKind"},
	{vocabChunks, "Chunk", "ChunkType"},
}

// TestPageVocabularyIsPackageEvents: web/vocabulary.js, the constants the
// page names events, kinds and frames by, is exactly what the log
// vocabulary's and package event's constants and the host's frame names
// generate (go test ./host -run
// TestPageVocabulary -update-vocabulary rewrites it).
func TestPageVocabularyIsPackageEvents(t *testing.T) {
	want := pageVocabulary(t)
	if *updateVocabulary {
		require.NoError(t, os.WriteFile(filepath.Join("web", "vocabulary.js"), []byte(want), 0o644))
	}
	got, err := os.ReadFile(filepath.Join("web", "vocabulary.js"))
	require.NoError(t, err)
	require.Equal(t, want, string(got), "web/vocabulary.js is stale: rerun with -update-vocabulary")
}

// TestPageSpellsNoEventTypeItself: no other page script spells an event
// type or a frame name as a string: they come from vocabulary.js.
func TestPageSpellsNoEventTypeItself(t *testing.T) {
	names := map[string]bool{}
	for _, c := range append(stringConsts(t, vocabTypes, "Type"), frameNames(t)...) {
		names[c.value] = true
	}
	quoted := regexp.MustCompile(`['"` + "`" + `]([a-z]+/[a-z/-]+)['"` + "`" + `]`)
	scripts, err := filepath.Glob(filepath.Join("web", "*.js"))
	require.NoError(t, err)
	require.NotEmpty(t, scripts)
	for _, script := range scripts {
		if filepath.Base(script) == "vocabulary.js" {
			continue
		}
		src, err := os.ReadFile(script)
		require.NoError(t, err)
		for _, m := range quoted.FindAllStringSubmatch(string(src), -1) {
			require.False(t, names[m[1]], "%s spells %q: name it through vocabulary.js", script, m[1])
		}
	}
}

type stringConst struct{ name, value string }

// pageVocabulary is the text of web/vocabulary.js.
func pageVocabulary(t *testing.T) string {
	var b strings.Builder
	b.WriteString("// The names the page reads events, kinds and frames by. Generated from\n")
	b.WriteString("// internal/vocab's and package event's constants and the host's frame\n")
	b.WriteString("// names by\n")
	b.WriteString("// TestPageVocabularyIsPackageEvents (-update-vocabulary); do not edit.\n")
	for _, g := range vocabularyGroups {
		writeObject(&b, g.object, stringConsts(t, g.file, g.prefix), g.prefix)
	}
	writeObject(&b, "Frame", frameNames(t), "frame")
	return b.String()
}

func writeObject(b *strings.Builder, object string, consts []stringConst, prefix string) {
	fmt.Fprintf(b, "\nexport const %s = Object.freeze({\n", object)
	for _, c := range consts {
		fmt.Fprintf(b, "  %s: '%s',\n", jsName(strings.TrimPrefix(c.name, prefix)), c.value)
	}
	b.WriteString("});\n")
}

// jsName is a Go constant's name after its prefix in lower camel case:
// TurnEnd → turnEnd, LLMRetry → llmRetry.
func jsName(name string) string {
	r := []rune(name)
	n := 0
	for n < len(r) && unicode.IsUpper(r[n]) {
		n++
	}
	if n > 1 && n < len(r) {
		n-- // the last capital starts the next word
	}
	for i := range n {
		r[i] = unicode.ToLower(r[i])
	}
	return string(r)
}

// frameNames are the host's frame* constants, from every non-test file.
func frameNames(t *testing.T) []stringConst {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var frames []stringConst
	for _, file := range files {
		if !strings.HasSuffix(file, "_test.go") {
			frames = append(frames, stringConsts(t, file, "frame")...)
		}
	}
	slices.SortFunc(frames, func(a, b stringConst) int { return strings.Compare(a.name, b.name) })
	return frames
}

// stringConsts are the string constants of file whose names start with
// prefix and a capital letter, in the file's order.
func stringConsts(t *testing.T, file, prefix string) []stringConst {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	require.NoError(t, err)
	var consts []stringConst
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				rest, ok := strings.CutPrefix(name.Name, prefix)
				if !ok || rest == "" || !unicode.IsUpper([]rune(rest)[0]) || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				value, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				consts = append(consts, stringConst{name.Name, value})
			}
		}
	}
	return consts
}
