package tests

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/dsh-actors/dsh-actors"

// allowedDeps is the dependency direction of the layers: the
// internal layers (top-level folders; under internal/, each package is a
// layer of its own) each layer may import. A layer may always import its
// own sub-packages.
var allowedDeps = map[string][]string{
	"descriptor": {"fault", "event", "internal/jsjson"},
	// event is what agents and models exchange with the runtime (content
	// blocks, messages, chunks): a leaf but for internal/jsjson.
	"event":    {"internal/jsjson"},
	"agent":    {"fault", "event", "internal/jsjson"},
	"session":  {"fault", "event", "descriptor", "internal/vocab", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson"},
	"query":    {"fault", "event", "internal/vocab", "session", "internal/catalog", "descriptor", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson"},
	"inbox":    {"fault", "event", "agent", "internal/actorkit", "internal/dispatch", "internal/jsjson"},
	"actors":   {"fault", "event", "internal/vocab", "descriptor", "agent", "session", "query", "internal/catalog", "inbox", "internal/actorkit", "internal/dispatch", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson"},
	"subagent": {"fault", "event", "internal/vocab", "descriptor", "agent", "session", "query", "internal/catalog", "inbox", "actors", "internal/actorkit", "internal/dispatch", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson", "internal/childenv"},
	"host":     {rootLayer, "fault", "event", "internal/vocab", "descriptor", "agent", "session", "query", "internal/catalog", "internal/index", "inbox", "actors", "subagent", "modelagent", "internal/llm", "internal/pgstore", "internal/actorkit", "internal/dispatch", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson", "internal/childenv"},
	// internal/llm is the model client: a leaf on the event vocabulary.
	"internal/llm": {"fault", "event", "internal/vocab", "internal/jsjson"},
	// internal/llmtest is the scripted model client and the mock model
	// server; _test.go files and modelagent/modelagenttest import it.
	"internal/llmtest": {"fault", "event", "internal/vocab", "internal/llm", "internal/jsjson"},
	// modelagent is the model loop and its tools: an agent on the subagent
	// service and the model client (modelagent/modelagenttest, its mock
	// model, is a small surface over internal/llmtest's server).
	"modelagent": {"fault", "event", "internal/vocab", "descriptor", "agent", "session", "query", "internal/catalog", "inbox", "actors", "subagent", "internal/llm", "internal/llmtest", "internal/actorkit", "internal/dispatch", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson", "internal/childenv"},
	// internal/actorkit is the protoactor plumbing the actor layers share
	// (supervisor, logging, accessors, cancellation coding), on fault alone.
	"internal/actorkit": {"fault"},
	// internal/childenv is the environment a started process begins from.
	"internal/childenv": {},
	// internal/dispatch is the dispatcher the actors run on: a leaf.
	"internal/dispatch": {},
	// internal/listeners is the copy-on-write listener list every event
	// fan-out uses: a leaf.
	"internal/listeners": {},
	// internal/durable is what both stores and the manager share about
	// durable admission and leases (a claim's message id, the two lease
	// errors).
	"internal/durable": {"fault"},
	// internal/sessionfs is the JSONL store's file-system seam (FS, OSFS):
	// a leaf.
	"internal/sessionfs": {},
	// internal/faultfs is a test harness: a sessionfs.FS injecting faults.
	"internal/faultfs": {"internal/sessionfs"},
	// internal/logpath is the layout of a JSONL root (where a session's
	// log and the lease file live): a leaf, kept off session's exported
	// surface.
	"internal/logpath": {},
	// internal/strhash hashes strings in place (FNV-1a) for the slots
	// picked by an id or a path: a leaf.
	"internal/strhash": {},
	// internal/cpuclock reads the process's CPU time for the measurements:
	// a leaf.
	"internal/cpuclock": {},
	// internal/jsjson reads and writes JSON as JSON.parse and
	// JSON.stringify do (agent's content blocks): a leaf.
	"internal/jsjson": {},
	// internal/vocab is the log vocabulary: every event type, the log-only
	// payloads and the one codec, on event's content types.
	"internal/vocab": {"event", "internal/jsjson"},
	// fault is the one error taxonomy (Code, Error): a leaf every layer uses.
	"fault": {},
	// internal/storegen writes synthetic stores for the measurements from
	// the documented store format alone: a leaf.
	"internal/storegen": {},
	// internal/catalog holds the catalog's steps shared by the query's
	// reader, the derived index and the Postgres store: on session.
	"internal/catalog": {"fault", "event", "descriptor", "internal/vocab", "session", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson"},
	// internal/index is the derived SQLite index beside the store: it
	// answers as the query's catalog reader does, so it sits on query.
	"internal/index": {"fault", "event", "internal/vocab", "session", "query", "internal/catalog", "descriptor", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson"},
	// internal/bench holds the CLI's measurement loops: it sits on the
	// runtime and under cmd.
	"internal/bench": {rootLayer, "internal/pgstore", "fault", "event", "internal/vocab", "descriptor", "agent", "session", "query", "internal/catalog", "internal/index", "inbox", "actors", "subagent", "modelagent", "internal/llm", "host", "internal/storegen", "internal/cpuclock", "internal/actorkit", "internal/dispatch", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson", "internal/childenv"},
	// internal/stress is the randomized stress harness of the CLI and the
	// stress tests: it is written on the root package, as an embedder
	// writes (tool_imports_test.go holds its direct imports to that).
	"internal/stress": {rootLayer, "fault", "event", "internal/vocab", "descriptor", "agent", "session", "query", "internal/catalog", "internal/index", "inbox", "actors", "subagent", "modelagent", "internal/llm", "internal/pgstore", "internal/actorkit", "internal/dispatch", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson", "internal/childenv"},
	// internal/testkit holds test helpers; only _test.go files import it.
	"internal/testkit": {},
	// internal/pgtest runs a private PostgreSQL server for a test binary;
	// only _test.go files import it.
	"internal/pgtest": {},
	// internal/multiproc drives several serve processes on one Postgres
	// store and checks the store's invariants; it talks to them over HTTP
	// and SQL only.
	"internal/multiproc": {},
	// internal/storetest is the store conformance suite; only _test.go
	// files import it.
	"internal/storetest": {"fault", "event", "descriptor", "internal/vocab", "session", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson"},
	// pgstore is the PostgreSQL store: a second session.Fenced beside the
	// JSONL store, on session only.
	"internal/pgstore": {"fault", "event", "internal/vocab", "descriptor", "session", "query", "internal/catalog", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson"},
	// the module's root package is the embedders' entry point: it opens
	// the runtime and binds the subagent service and the model agents,
	// under cmd and internal/bench.
	rootLayer: {"fault", "event", "internal/vocab", "descriptor", "agent", "session", "query", "internal/catalog", "internal/index", "inbox", "actors", "subagent", "modelagent", "internal/llm", "internal/pgstore", "internal/actorkit", "internal/dispatch", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson", "internal/childenv"},
	"cmd": {rootLayer, "fault", "event", "internal/vocab", "descriptor", "agent", "session", "query", "internal/catalog", "internal/index", "inbox", "actors", "subagent", "host", "internal/llm", "modelagent", "internal/pgstore",
		"internal/bench", "internal/storegen", "internal/cpuclock", "internal/stress", "internal/actorkit", "internal/dispatch", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson", "internal/childenv"},
	"tests": {rootLayer, "fault", "event", "internal/vocab", "descriptor", "agent", "session", "query", "internal/catalog", "internal/index", "inbox", "actors", "subagent", "host", "cmd", "internal/llm", "modelagent", "internal/pgstore", "internal/stress", "internal/actorkit", "internal/dispatch", "internal/durable", "internal/sessionfs", "internal/logpath", "internal/strhash", "internal/listeners", "internal/jsjson", "internal/childenv"},
}

// rootLayer is the layer name of the module's root package.
const rootLayer = "(root)"

// listingLayers must never reach the actor runtime or what sits on it.
var (
	listingLayers = []string{"query", "internal/index", "internal/catalog", "descriptor", "session"}
	runtimeLayers = []string{"actors", "inbox", "subagent", "host"}
)

// TestListingNeverImportsTheActorRuntime is the guard: listing
// children reads sessions only, so query (and what it builds on) must not
// reach an activation.
func TestListingNeverImportsTheActorRuntime(t *testing.T) {
	require.Empty(t, runtimeImports(internalDeps(t)))
}

// TestDependencyDirection checks every existing package of a known layer
// against allowedDeps (transitively, through go list -deps).
func TestDependencyDirection(t *testing.T) {
	require.Empty(t, directionViolations(internalDeps(t)))
}

// TestTheCheckersCatchViolations feeds both checkers a forbidden graph, so
// the two tests above cannot pass vacuously.
func TestTheCheckersCatchViolations(t *testing.T) {
	deps := map[string][]string{
		module + "/query":             {module + "/session", module + "/actors/activation"},
		module + "/agent":             {module + "/session"},
		module + "/subagent":          {module + "/actors/manager", module + "/query"},
		module + "/elsewhere":         {module + "/host"},
		module + "/host":              {module + "/cmd/dsh-actors"},
		module + "/descriptor":        nil,
		module + "/internal/storegen": {module + "/session", module + "/query"},
		module + "/internal/bench":    {module + "/internal/storegen", module + "/internal/other"},
	}
	require.Equal(t, []string{module + "/query imports " + module + "/actors/activation"}, runtimeImports(deps))
	require.ElementsMatch(t, []string{
		module + "/query (layer query) depends on " + module + "/actors/activation (layer actors)",
		module + "/agent (layer agent) depends on " + module + "/session (layer session)",
		module + "/internal/storegen (layer internal/storegen) depends on " + module + "/session (layer session)",
		module + "/internal/storegen (layer internal/storegen) depends on " + module + "/query (layer query)",
		module + "/internal/bench (layer internal/bench) depends on " + module + "/internal/other (layer internal/other)",
		module + "/host (layer host) depends on " + module + "/cmd/dsh-actors (layer cmd)",
	}, directionViolations(deps))
}

func runtimeImports(deps map[string][]string) []string {
	var found []string
	for pkg, imports := range deps {
		if !slices.Contains(listingLayers, layerOf(pkg)) {
			continue
		}
		for _, imp := range imports {
			if slices.Contains(runtimeLayers, layerOf(imp)) {
				found = append(found, pkg+" imports "+imp)
			}
		}
	}
	return found
}

// directionViolations lists every dependency allowedDeps does not permit.
// Packages outside the planned layers are not checked.
func directionViolations(deps map[string][]string) []string {
	var found []string
	for pkg, imports := range deps {
		layer := layerOf(pkg)
		allowed, known := allowedDeps[layer]
		if !known {
			continue
		}
		for _, imp := range imports {
			if dep := layerOf(imp); dep != layer && !slices.Contains(allowed, dep) {
				found = append(found, pkg+" (layer "+layer+") depends on "+imp+" (layer "+dep+")")
			}
		}
	}
	return found
}

// internalDeps maps every package of the module to the module packages it
// depends on, directly or not (non-test code).
func internalDeps(t *testing.T) map[string][]string {
	t.Helper()
	deps := map[string][]string{}
	lines := bufio.NewScanner(strings.NewReader(goList(t, "{{.ImportPath}} {{join .Deps \" \"}}")))
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) == 0 || !inModule(fields[0]) {
			continue
		}
		deps[fields[0]] = slices.DeleteFunc(fields[1:], func(d string) bool { return !inModule(d) })
	}
	require.NoError(t, lines.Err())
	require.Contains(t, deps, module+"/query", "go list found the module's packages")
	return deps
}

// goList runs go list -e -f format over the module's packages and returns
// its output.
func goList(t *testing.T, format string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	cmd := exec.Command(goBin, "list", "-e", "-f", format, "./...")
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	return string(out)
}

// inModule reports whether pkg is the module's root package or one below it.
func inModule(pkg string) bool { return pkg == module || strings.HasPrefix(pkg, module+"/") }

// layerOf returns the top-level folder of a module package, rootLayer for
// the root package, or for a package under internal/ its first two path
// segments (internal/bench).
func layerOf(pkg string) string {
	if pkg == module {
		return rootLayer
	}
	rel := strings.TrimPrefix(pkg, module+"/")
	layer, rest, _ := strings.Cut(rel, "/")
	if layer == "internal" && rest != "" {
		sub, _, _ := strings.Cut(rest, "/")
		return layer + "/" + sub
	}
	return layer
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "go.mod not found")
		dir = parent
	}
}
