package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"

	"github.com/dsh-actors/dsh-actors/internal/stress"
)

const stressUsage = `usage: dsh-actors stress [--forests F] [--fanout K] [--depth D] [--followups N] [--seed S] [--workers W] [--store DIR]

The last line is the summary:
  activations=N        continuable epochs started (subagent/start)
  children=N           distinct continuable children
  followups=A/R        follow-ups accepted by a child's inbox / rejected with a typed
                       error (the "rejections:" line counts them by code)
  logged=N             accepted follow-ups that reached their child's log
  discarded=N          accepted follow-ups discarded unrun (agent/inbox/discard)
  lost=N               accepted follow-ups lost to a failed log (a full disk), each
                       named by an error line (logged+discarded+lost = A)
  drains=N             scoped drains run
  sessions=N           sessions in the store at the end
  violations=N         broken invariants, each printed as "violation: …" (exit 1)
  leaked_goroutines=N  goroutines left above the starting count (exit 1)

flags:`

// runStress runs one randomized stress run (package internal/stress) and
// checks its invariants: every follow-up accepted or rejected with a typed
// error, every accepted message logged, discarded or reported lost,
// child-first order of every disposal, no agent left, goroutines back to
// baseline, every session stored and listed. It exits 1 naming the first
// violation. The last line is the summary:
// "stress: activations=… followups=accepted/rejected … violations=0 leaked_goroutines=0".
func runStress(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("stress")
	var cfg stress.Config
	flags.IntVar(&cfg.Forests, "forests", 3, "top-level agents")
	flags.IntVar(&cfg.Fanout, "fanout", 3, "children per continuable node")
	flags.IntVar(&cfg.Depth, "depth", 3, "continuable levels below each top-level agent")
	flags.IntVar(&cfg.Followups, "followups", 200, "follow-ups to send")
	flags.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	flags.IntVar(&cfg.Workers, "workers", 8, "concurrent senders")
	flags.StringVar(&cfg.Root, "store", "", "session store root (default: a temporary folder, removed after)")
	if err := parseStressFlags(flags, args, &cfg); err != nil {
		return usageError(stderr, stressUsage, flags, err)
	}
	if cfg.Root != "" {
		if err := checkStoreRoot(cfg.Root); err != nil {
			return failure(stderr, "stress", err)
		}
	}
	baseline := runtime.NumGoroutine()
	report, err := stress.Run(ctx, cfg)
	if err != nil {
		return failure(stderr, "stress", err)
	}
	leaked := stress.Goroutines(baseline)
	printStressReport(stdout, report, leaked)
	switch {
	case len(report.Violations) > 0:
		fmt.Fprintf(stderr, "dsh-actors stress: violation: %s\n", report.Violations[0])
		return 1
	case leaked > 0:
		fmt.Fprintf(stderr, "dsh-actors stress: violation: %d goroutines leaked\n", leaked)
		return 1
	}
	return 0
}

// parseStressFlags parses args into cfg and rejects sizes below one, more
// than maxStressWorkers senders and forests of more than maxStressAgents
// continuable agents in all.
func parseStressFlags(flags *flag.FlagSet, args []string, cfg *stress.Config) error {
	if err := parseFlagsOnly(flags, args); err != nil {
		return err
	}
	sizes := []struct {
		name  string
		value int
	}{{"forests", cfg.Forests}, {"fanout", cfg.Fanout}, {"depth", cfg.Depth}, {"followups", cfg.Followups}, {"workers", cfg.Workers}}
	for _, size := range sizes {
		if size.value < 1 {
			return fmt.Errorf("--%s must be at least 1, got %d", size.name, size.value)
		}
	}
	if err := atMost("workers", cfg.Workers, maxStressWorkers); err != nil {
		return err
	}
	perForest := descendants(cfg.Fanout, cfg.Depth, maxStressAgents)
	if perForest > maxStressAgents/cfg.Forests {
		return fmt.Errorf("--forests×(--fanout + … + --fanout^--depth) must be at most %d agents (--forests %d --fanout %d --depth %d)",
			maxStressAgents, cfg.Forests, cfg.Fanout, cfg.Depth)
	}
	return nil
}

// Ceilings of the stress sizes: the continuable agents of every forest
// together, and the concurrent senders.
const (
	maxStressAgents  = 100_000
	maxStressWorkers = 10_000
)

func printStressReport(stdout io.Writer, report stress.Report, leaked int) {
	codes := make([]string, 0, len(report.ByCode))
	for code, n := range report.ByCode {
		codes = append(codes, fmt.Sprintf("%s=%d", code, n))
	}
	sort.Strings(codes)
	if len(codes) > 0 {
		fmt.Fprintf(stdout, "rejections: %s\n", strings.Join(codes, " "))
	}
	for _, v := range report.Violations {
		fmt.Fprintf(stdout, "violation: %s\n", v)
	}
	fmt.Fprintf(stdout, "stress: %s leaked_goroutines=%d\n", report, leaked)
}
