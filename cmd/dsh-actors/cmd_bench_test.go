package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/bench"
)

// benchRow matches one table row: id, measurement, ours, baseline, a
// positive finite ratio in a known direction, a target or "—", a result.
var benchRow = regexp.MustCompile(`^(\d[a-z]?)\s{2,}.+\s{2,}(ours/base|base/ours) (\d+(\.\d+)?(e[-+]\d+)?)(×|%)\s{2,}(—|[≤≥] \S+|ours [≤≥] .+)\s{2,}(met|missed|info)$`)

// A quick run through dispatch prints every row of the table with a
// well-formed ratio (no timing is asserted) and exits 0.
func TestBenchQuickTable(t *testing.T) {
	code, stdout, stderr := run(t, "bench", "--quick", "--dir", t.TempDir())
	require.Equal(t, 0, code, stderr)
	ids := map[string]bool{}
	for _, line := range strings.Split(stdout, "\n") {
		m := benchRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ids[m[1]] = true
		require.NotEqual(t, "0", m[3], line)
	}
	for _, id := range []string{"1a", "1b", "2a", "2b", "2c", "2d", "3b", "5a", "5b", "5c", "5d", "5e", "6", "6f", "7a", "8a", "8b", "9a", "9b", "9c", "9d", "9e"} {
		require.True(t, ids[id], "row %s missing from:\n%s", id, stdout)
	}
	require.Regexp(t, `(?m)^targets: \d+ met, \d+ missed, \d+ informational$`, stdout)
	for r := 1; r <= bench.Rows; r++ {
		require.Contains(t, stderr, fmt.Sprintf("bench: row %d:", r))
	}
}

// --only selects rows; --json prints the report as JSON whose lines all
// carry a positive ratio.
func TestBenchOnlyJSON(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := run(t, "bench", "--quick", "--json", "--only", "1,3-4", "--dir", dir)
	require.Equal(t, 0, code, stderr)
	var rep bench.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	var ids []string
	for _, l := range rep.Lines {
		ids = append(ids, l.ID)
		require.Positive(t, l.Ratio, l.ID)
		require.Contains(t, []bench.Status{bench.Met, bench.Missed, bench.Info}, l.Status)
	}
	require.Equal(t, []string{"1a", "1b", "3b"}, ids, "row 4 is go test's: it adds no line")
	require.Contains(t, stderr, "bench: row 4: append throughput by durability (the store's own path: go test -bench LiveAppendDurability ./session)")
	require.True(t, rep.Env.Quick)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the temporary stores are removed")
}

func TestBenchBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"--only", "10"}, `--only: row "10" is not a number from 1 to 9`},
		{[]string{"--scale", "1000"}, "--scale: at least two sizes"},
		{[]string{"--scale", "1000,x"}, `--scale: "x" is not a number`},
		{[]string{"--scale", "10000,1000"}, "increasing"},
		{[]string{"--scale", "1000,2000000"}, "--scale must be at most"},
		{[]string{"--only", "3-1"}, "backwards"},
		{[]string{"--fanout", "0"}, "--fanout must be at least 1"},
		{[]string{"--agents", "-5"}, "--agents must be at least 1"},
		{[]string{"--children", "50", "--sessions", "50"}, "--children (50) must be fewer than --sessions (50)"},
		{[]string{"--dir", "/nonexistent/dsh-bench"}, "is not a folder"},
		{[]string{"--frobnicate"}, "flag provided but not defined"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	}
	for _, c := range cases {
		code, stdout, stderr := run(t, append([]string{"bench"}, c.args...)...)
		require.Equal(t, 2, code, c.args)
		require.Empty(t, stdout, c.args)
		require.Contains(t, stderr, c.msg, c.args)
		require.Contains(t, stderr, "usage: dsh-actors bench", c.args)
	}
}

// bench --json writes the report as JSON.stringify(report, null, 2) would:
// its targets' "<=" and ">=" and any <, >, & or U+2028 in a name are not
// escaped, and otherwise the bytes are the indented encoding/json ones.
func TestBenchJSONIsNotHTMLEscaped(t *testing.T) {
	rep := bench.Report{Lines: []bench.Line{
		{ID: "1a", Name: "a & b <c>\u2028", Target: &bench.Target{Op: bench.AtMost, Value: 3}},
		{ID: "1b", Target: &bench.Target{Op: bench.AtLeast, Value: 4}},
	}}
	var ours bytes.Buffer
	require.NoError(t, writeJSON(&ours, rep, "  "))
	escaped, err := json.MarshalIndent(rep, "", "  ")
	require.NoError(t, err)
	want := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&", `\u2028`, "\u2028").Replace(string(escaped) + "\n")
	require.Equal(t, want, ours.String())
	require.Contains(t, ours.String(), `"op": "<="`)
	require.Contains(t, ours.String(), `"name": "a & b <c>`+"\u2028"+`"`)
}
