package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Rows is the number of rows Run knows (1 to Rows).
const Rows = 9

// RowNames describe the rows, by number.
var RowNames = [Rows + 1]string{
	1: "follow-up admission round trip",
	2: "scripted turns with every event logged",
	3: "bytes per idle agent",
	4: "append throughput by durability (the store's own path: go test -bench LiveAppendDurability ./session)",
	5: "continuable children: start → settled, resident vs cold follow-up",
	6: "child-first scoped drain of a forest",
	7: "ListChildren over a generated store",
	8: "derived index: indexed ListChildren, concurrent listing",
	9: "per-agent costs at 1k to 100k live children",
}

// Config sizes one Run. Full and Quick give the two standard sizes; the
// CLI's flags then adjust single fields.
type Config struct {
	// Dir is the folder the temporary stores are made in (it must exist);
	// Run removes what it creates there.
	Dir string
	// Rows to run (1..Rows); empty means all, in order.
	Rows []int
	// Quick marks the small sizes (reported in Env).
	Quick bool
	// Progress, when set, gets one line as each row starts.
	Progress io.Writer

	AdmissionRounds int // row 1: interleaved rounds
	SoloTurns       int // row 2: turns of the single agent
	ParallelAgents  int // row 2: agents of the parallel run
	ParallelTurns   int // row 2: turns per parallel agent
	IdleAgents      int // row 3: idle live agents measured
	SettleRounds    int // row 5: interleaved start→settled rounds
	ResidentRounds  int // row 5: follow-ups to the resident child
	ResumeEvents    []int
	ResumeRounds    int   // row 5: cold resumes per size up to 1,000 events
	Fanout, Depth   int   // row 6: forest shape
	DrainRuns       int   // row 6: rounds, each a drain, a tree stop and a floor
	CatalogSessions int   // row 7: C
	CatalogChildren int   // row 7: D
	CatalogRounds   int   // row 7: timed listings
	IndexSessions   int   // row 8: C
	IndexChildren   int   // row 8: D
	IndexRounds     int   // row 8: timed listings of each reader
	IndexClients    int   // row 8: concurrent callers
	IndexRequests   int   // row 8: listings per caller
	ScaleSizes      []int // row 9: live children of one parent, smallest first
	ScaleSettle     int   // row 9: short children started beside the live ones
}

// Full is the default size of `dsh-actors bench` (a minute or two).
func Full() Config {
	return Config{
		AdmissionRounds: 20_000,
		SoloTurns:       10_000, ParallelAgents: 100, ParallelTurns: 100,
		IdleAgents:   10_000,
		SettleRounds: 200, ResidentRounds: 2_000, ResumeEvents: []int{10, 1_000, 10_000}, ResumeRounds: 50,
		Fanout: 10, Depth: 4, DrainRuns: 5,
		CatalogSessions: 2_000, CatalogChildren: 200, CatalogRounds: 5,
		IndexSessions: 10_000, IndexChildren: 1_000, IndexRounds: 5, IndexClients: 64, IndexRequests: 4,
		ScaleSizes: []int{1_000, 10_000, 100_000}, ScaleSettle: 500,
	}
}

// Quick is the small size for tests: every row, a few seconds in all.
func Quick() Config {
	return Config{
		Quick:           true,
		AdmissionRounds: 300,
		SoloTurns:       20, ParallelAgents: 10, ParallelTurns: 3,
		IdleAgents:   3000,
		SettleRounds: 5, ResidentRounds: 30, ResumeEvents: []int{10, 200}, ResumeRounds: 3,
		Fanout: 3, Depth: 2, DrainRuns: 1,
		CatalogSessions: 60, CatalogChildren: 6, CatalogRounds: 2,
		IndexSessions: 60, IndexChildren: 6, IndexRounds: 2, IndexClients: 4, IndexRequests: 2,
		ScaleSizes: []int{20, 60}, ScaleSettle: 5,
	}
}

// ParseRows parses a comma-separated list of row numbers and ranges
// ("1,3-5"), returning them sorted without duplicates.
func ParseRows(s string) ([]int, error) {
	var rows []int
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseRow(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = parseRow(hi); err != nil {
				return nil, err
			}
			if b < a {
				return nil, fmt.Errorf("row range %q is backwards", part)
			}
		}
		for r := a; r <= b; r++ {
			rows = append(rows, r)
		}
	}
	slices.Sort(rows)
	return slices.Compact(rows), nil
}

func parseRow(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > Rows {
		return 0, fmt.Errorf("row %q is not a number from 1 to %d", s, Rows)
	}
	return n, nil
}

// Validate reports the first size that cannot run.
func (c Config) Validate() error {
	sizes := []struct {
		name  string
		value int
	}{
		{"admission rounds", c.AdmissionRounds}, {"solo turns", c.SoloTurns}, {"parallel agents", c.ParallelAgents},
		{"parallel turns", c.ParallelTurns}, {"idle agents", c.IdleAgents},
		{"settle rounds", c.SettleRounds},
		{"resident rounds", c.ResidentRounds}, {"resume rounds", c.ResumeRounds}, {"fanout", c.Fanout}, {"depth", c.Depth},
		{"drain runs", c.DrainRuns}, {"catalog sessions", c.CatalogSessions}, {"catalog children", c.CatalogChildren},
		{"catalog rounds", c.CatalogRounds}, {"scale settle", c.ScaleSettle},
	}
	for _, s := range sizes {
		if s.value < 1 {
			return fmt.Errorf("%s must be at least 1, got %d", s.name, s.value)
		}
	}
	if c.CatalogChildren >= c.CatalogSessions {
		return fmt.Errorf("catalog children (%d) must be fewer than catalog sessions (%d)", c.CatalogChildren, c.CatalogSessions)
	}
	if err := checkScaleSizes(c.ScaleSizes); err != nil {
		return err
	}
	if len(c.ResumeEvents) == 0 {
		return fmt.Errorf("resume sizes must not be empty")
	}
	for _, n := range c.ResumeEvents {
		if n < 1 {
			return fmt.Errorf("resume sizes must be at least 1, got %d", n)
		}
	}
	for _, r := range c.Rows {
		if r < 1 || r > Rows {
			return fmt.Errorf("row %d is not a number from 1 to %d", r, Rows)
		}
	}
	if c.Dir == "" {
		return fmt.Errorf("a folder for the temporary stores is required")
	}
	return nil
}

// rowFuncs measure the rows; row 4 has none: it times the session store's
// appends one event at a time, which no public call does, so its
// measurement is the session package's go test benchmark that RowNames
// names.
var rowFuncs = [Rows + 1]func(context.Context, Config) ([]Line, error){
	1: admissionRow, 2: turnsRow, 3: agentsRow, 5: continuableRow, 6: drainRow, 7: catalogRow, 8: indexRow,
	9: scaleRow,
}

// Run measures the selected rows one after another (each row's baselines
// in the same run, interleaved where the operation is short) and returns
// the report; a row measured by go test only (4) is named on Progress and
// adds no line. It stops at the first measurement that fails, returning the
// lines measured so far with the error naming the row. ctx cancels it
// between operations.
func Run(ctx context.Context, cfg Config) (Report, error) {
	rep := Report{Env: Env{
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Dir: cfg.Dir, Quick: cfg.Quick,
	}}
	if err := cfg.Validate(); err != nil {
		return rep, err
	}
	rows := cfg.Rows
	if len(rows) == 0 {
		for r := 1; r <= Rows; r++ {
			rows = append(rows, r)
		}
	}
	start := time.Now()
	for _, r := range rows {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "bench: row %d: %s\n", r, RowNames[r])
		}
		if rowFuncs[r] == nil {
			continue
		}
		runtime.GC()
		lines, err := rowFuncs[r](ctx, cfg)
		if err != nil {
			rep.Env.Elapsed = time.Since(start).Round(time.Millisecond).String()
			return rep, fmt.Errorf("row %d (%s): %w", r, RowNames[r], err)
		}
		rep.Lines = append(rep.Lines, lines...)
	}
	rep.Env.Elapsed = time.Since(start).Round(time.Millisecond).String()
	return rep, nil
}

// checkScaleSizes refuses fewer than two sizes, or sizes that are not
// positive and increasing.
func checkScaleSizes(sizes []int) error {
	if len(sizes) < 2 {
		return fmt.Errorf("scale sizes need at least two, got %v", sizes)
	}
	for i, n := range sizes {
		if n < 1 || i > 0 && n <= sizes[i-1] {
			return fmt.Errorf("scale sizes must be positive and increasing, got %v", sizes)
		}
	}
	return nil
}
