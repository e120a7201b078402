package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/dsh-actors/dsh-actors/internal/bench"
)

const benchUsage = "usage: dsh-actors bench [--quick] [--only ROWS] [--dir DIR] [--json] [--agents N] [--big-log] [--fanout K] [--depth D] [--children D] [--sessions C] [--scale N,N,…]"

// Ceilings of the bench sizes, so a typo cannot exhaust memory or disk:
// idle agents of row 3, agents below the root of row 6's forest, sessions
// of row 7's store, live children of row 9.
const (
	maxBenchAgents   = 1_000_000
	maxBenchForest   = 100_000
	maxBenchSessions = 100_000
	maxBenchScale    = 1_000_000
)

// runBench measures the rows of package bench and prints them as a table
// (or JSON): ours, the baseline measured in the same run, the ratio, the
// target and whether it was met. Missed targets are informational: the exit
// status is 0 unless a measurement itself fails (1) or a flag is bad (2).
// Temporary stores go in a fresh folder (under --dir when given) that is
// removed afterwards.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("bench")
	quick := flags.Bool("quick", false, "small sizes (a few seconds; for tests)")
	only := flags.String("only", "", "rows to run, e.g. 1,3-5 (default all 9)")
	dir := flags.String("dir", "", "folder for the temporary stores (default the system temp folder); removed afterwards")
	asJSON := flags.Bool("json", false, "print the report as JSON")
	agents := flags.Int("agents", 0, "row 3: idle live agents to measure (default 10000; quick 3000); raise to 100000 for the issue's figure")
	bigLog := flags.Bool("big-log", false, "row 5: also cold-resume a 100,000-event log")
	fanout := flags.Int("fanout", 0, "row 6: children per node of the drained forest (default 10; quick 3)")
	depth := flags.Int("depth", 0, "row 6: levels of the drained forest (default 4; quick 2)")
	children := flags.Int("children", 0, "row 7: D, children of the listed parent (default 200; quick 6)")
	sessions := flags.Int("sessions", 0, "row 7: C, sessions in the generated store (default 2000; quick 60)")
	scale := flags.String("scale", "", "row 9: live children of one parent, increasing, comma-separated (default 1000,10000,100000; quick 20,60)")
	if err := parseFlagsOnly(flags, args); err != nil {
		return usageError(stderr, benchUsage, flags, err)
	}
	cfg := bench.Full()
	if *quick {
		cfg = bench.Quick()
	}
	var err error
	if *only != "" {
		if cfg.Rows, err = bench.ParseRows(*only); err != nil {
			return usageError(stderr, benchUsage, flags, fmt.Errorf("--only: %w", err))
		}
	}
	set := map[string]bool{}
	flags.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, size := range []struct {
		name  string
		value int
		field *int
	}{{"agents", *agents, &cfg.IdleAgents}, {"fanout", *fanout, &cfg.Fanout}, {"depth", *depth, &cfg.Depth},
		{"children", *children, &cfg.CatalogChildren}, {"sessions", *sessions, &cfg.CatalogSessions}} {
		if !set[size.name] {
			continue
		}
		if size.value < 1 {
			return usageError(stderr, benchUsage, flags, fmt.Errorf("--%s must be at least 1, got %d", size.name, size.value))
		}
		*size.field = size.value
	}
	for _, ceiling := range []struct {
		name         string
		value, limit int
	}{{"agents", cfg.IdleAgents, maxBenchAgents}, {"sessions", cfg.CatalogSessions, maxBenchSessions}} {
		if err := atMost(ceiling.name, ceiling.value, ceiling.limit); err != nil {
			return usageError(stderr, benchUsage, flags, err)
		}
	}
	if descendants(cfg.Fanout, cfg.Depth, maxBenchForest) > maxBenchForest {
		return usageError(stderr, benchUsage, flags, fmt.Errorf("--fanout + … + --fanout^--depth must be at most %d agents (--fanout %d --depth %d)",
			maxBenchForest, cfg.Fanout, cfg.Depth))
	}
	if *bigLog {
		cfg.ResumeEvents = append(cfg.ResumeEvents, 100_000)
	}
	if set["scale"] {
		if cfg.ScaleSizes, err = parseScaleSizes(*scale); err != nil {
			return usageError(stderr, benchUsage, flags, err)
		}
	}
	if cfg.CatalogChildren >= cfg.CatalogSessions {
		return usageError(stderr, benchUsage, flags, fmt.Errorf("--children (%d) must be fewer than --sessions (%d)", cfg.CatalogChildren, cfg.CatalogSessions))
	}
	if *dir != "" {
		if info, err := os.Stat(*dir); err != nil || !info.IsDir() {
			return usageError(stderr, benchUsage, flags, fmt.Errorf("--dir %q is not a folder", *dir))
		}
	}

	tmp, err := os.MkdirTemp(*dir, "dsh-bench-*")
	if err != nil {
		return failure(stderr, "bench", err)
	}
	cfg.Dir, cfg.Progress = tmp, stderr
	report, runErr := bench.Run(ctx, cfg)
	runErr = errors.Join(runErr, os.RemoveAll(tmp))
	if len(report.Lines) > 0 || runErr == nil {
		write := report.WriteTable
		if *asJSON {
			write = func(w io.Writer) error { return writeJSON(w, report, "  ") }
		}
		if err := write(stdout); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr != nil {
		return failure(stderr, "bench", runErr)
	}
	return 0
}

// parseScaleSizes parses --scale: at least two sizes, each a number of
// live children from 1 to maxBenchScale, increasing.
func parseScaleSizes(s string) ([]int, error) {
	var sizes []int
	for part := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("--scale: %q is not a number", part)
		}
		if err := atMost("scale", n, maxBenchScale); err != nil {
			return nil, err
		}
		sizes = append(sizes, n)
	}
	if len(sizes) < 2 {
		return nil, fmt.Errorf("--scale: at least two sizes, got %q", s)
	}
	for i := 1; i < len(sizes); i++ {
		if sizes[i] <= sizes[i-1] || sizes[0] < 1 {
			return nil, fmt.Errorf("--scale: sizes must be positive and increasing, got %q", s)
		}
	}
	return sizes, nil
}
