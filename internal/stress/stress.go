package stress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
)

// Config sizes a run. Zero sizes take the defaults (small enough for CI).
type Config struct {
	Forests   int    // top-level agents (default 3)
	Fanout    int    // children per continuable node (default 3)
	Depth     int    // continuable levels below each top-level agent (default 3)
	Followups int    // follow-ups sent (default 200)
	Seed      uint64 // random seed
	Workers   int    // concurrent senders (default 8)
	Root      string // store folder; empty means a temporary one, removed after
	// Open opens the runtime over the store folder with the options Run
	// chooses; nil is dsh.Open (tests give one whose store's file system
	// injects faults).
	Open func(dsh.Options) (*dsh.Runtime, error)
	// AfterGrown, when set, is called once every forest has grown and
	// settled, before the follow-ups race (e.g. to fill the FS's disk).
	AfterGrown func()
	Logger     *slog.Logger
}

func (c *Config) defaults() {
	c.Forests = orDefault(c.Forests, 3)
	c.Fanout = orDefault(c.Fanout, 3)
	c.Depth = orDefault(c.Depth, 3)
	c.Followups = orDefault(c.Followups, 200)
	c.Workers = orDefault(c.Workers, 8)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Open == nil {
		c.Open = dsh.Open
	}
}

func orDefault(v, fallback int) int {
	if v > 0 {
		return v
	}
	return fallback
}

// Report is what a run observed. Violations lists every broken invariant,
// first one first; LeakedGoroutines is measured by the caller with
// Goroutines around Run.
type Report struct {
	Activations int            // continuable epochs (ChildStarted)
	Children    int            // distinct continuable children
	Accepted    int            // follow-ups accepted
	Rejected    int            // follow-ups rejected with a typed error
	Logged      int            // accepted follow-ups that reached their child's log
	Discarded   int            // accepted follow-ups discarded unrun
	Lost        int            // accepted follow-ups reported lost to a failed log (an error line each)
	Drains      int            // scoped drains run
	ByCode      map[string]int // rejections by error code
	Sessions    int            // sessions in the store at the end
	Violations  []string
}

// String is the summary line (without the goroutine count).
func (r Report) String() string {
	return fmt.Sprintf("activations=%d children=%d followups=%d/%d logged=%d discarded=%d lost=%d drains=%d sessions=%d violations=%d",
		r.Activations, r.Children, r.Accepted, r.Rejected, r.Logged, r.Discarded, r.Lost, r.Drains, r.Sessions, len(r.Violations))
}

// Run executes one stress run and checks its invariants. It returns an
// error only when the run could not be set up or torn down; broken
// invariants are in the report.
func Run(ctx context.Context, cfg Config) (Report, error) {
	cfg.defaults()
	root, cleanup, err := storeRoot(cfg.Root)
	if err != nil {
		return Report{}, err
	}
	defer cleanup()
	rec := newRecorder()
	logger := slog.New(lostRecorder{Handler: cfg.Logger.Handler(), rec: rec})
	rt, err := cfg.Open(dsh.Options{Dir: root, NoIndex: true, Logger: logger, NewAgent: Agent})
	if err != nil {
		return Report{}, err
	}
	s := newRun(cfg, rt, rec)
	report, runErr := s.execute(ctx)
	closeErr := rt.Close()
	s.stopNotices()
	if runErr == nil {
		runErr = closeErr
	}
	s.check(ctx, &report, root)
	return report, runErr
}

func storeRoot(root string) (string, func(), error) {
	if root != "" {
		return root, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "dsh-actors-stress-*")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// Goroutines waits (up to a second) for the goroutine count to come back
// to baseline and returns how many are left above it.
func Goroutines(baseline int) int {
	deadline := time.Now().Add(time.Second)
	for {
		n := runtime.NumGoroutine() - baseline
		if n <= 0 || time.Now().After(deadline) {
			return max(n, 0)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Agent is the stress agents' factory. "tree D K" spawns K children told
// "tree D-1 K" (none at D=0) and replies; "hold DURATION" stays in its turn
// that long (or until cancelled); any other text is replied to.
func Agent(agent.Options) agent.Agent { return agent.Func(turn) }

func turn(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
	text := msg.Content[0].Text
	if d, ok := strings.CutPrefix(text, "hold "); ok {
		if !hold(ctx, d) {
			return agent.Aborted, nil
		}
	}
	if depth, fanout, ok := parseTree(text); ok && depth > 0 {
		if subagents := host.Subagents(); subagents != nil {
			for i := range fanout {
				_, _, _ = subagents.Spawn(ctx, "node-"+strconv.Itoa(i), fmt.Sprintf("tree %d %d", depth-1, fanout))
			}
		}
	}
	return agent.Completed, host.Say(ctx, event.Text("ok: "+text))
}

// hold waits for the duration; false when ctx ended first.
func hold(ctx context.Context, duration string) bool {
	d, _ := time.ParseDuration(duration)
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func parseTree(text string) (depth, fanout int, ok bool) {
	fields := strings.Fields(text)
	if len(fields) != 3 || fields[0] != "tree" {
		return 0, 0, false
	}
	d, err1 := strconv.Atoi(fields[1])
	k, err2 := strconv.Atoi(fields[2])
	return d, k, err1 == nil && err2 == nil
}

// run is the state of one stress run.
type run struct {
	cfg         Config
	rt          *dsh.Runtime
	rec         *recorder
	stopNotices func()
	rand        *rand.Rand
	mu          sync.Mutex // guards rand
}

func newRun(cfg Config, rt *dsh.Runtime, rec *recorder) *run {
	rec.agent = rt.Agent
	return &run{cfg: cfg, rt: rt, rec: rec, stopNotices: rt.Subscribe(rec.notice),
		rand: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
}

func (s *run) intn(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rand.IntN(n)
}

// execute grows the forests, races follow-ups and drains against them, and
// drains every forest at the end.
func (s *run) execute(ctx context.Context) (Report, error) {
	var report Report
	roots, err := s.growForests(ctx)
	if err != nil {
		return report, err
	}
	if err := s.grown(ctx, roots); err != nil {
		return report, err
	}
	if s.cfg.AfterGrown != nil {
		s.cfg.AfterGrown()
	}
	s.race(ctx, &report)
	for _, root := range roots {
		if err := s.rt.Drain(ctx, root); err != nil {
			report.Violations = append(report.Violations, "final drain: "+err.Error())
		}
	}
	for _, root := range roots {
		if err := root.WhenIdle(ctx); err != nil {
			return report, err
		}
	}
	if left := s.rec.liveChildren(); len(left) > 0 {
		report.Violations = append(report.Violations, fmt.Sprintf("%d children left live after the final drain (%s first)", len(left), left[0]))
	}
	return report, nil
}

// growForests starts the top-level agents and tells each to grow a tree.
func (s *run) growForests(ctx context.Context) ([]*dsh.Handle, error) {
	roots := make([]*dsh.Handle, s.cfg.Forests)
	for i := range roots {
		h, err := s.rt.StartAgent(ctx, fmt.Sprintf("forest-%d", i))
		if err != nil {
			return nil, err
		}
		roots[i] = h
		s.rec.root(h)
		tree := fmt.Sprintf("tree %d %d", s.cfg.Depth, s.cfg.Fanout)
		if _, err := s.rt.PromptSession(ctx, h.ID(), event.Text(tree), event.Source{Kind: event.SourceUser}); err != nil {
			return nil, err
		}
	}
	return roots, nil
}

// grown waits until the roots' tree turns ended and every continuable
// node settled: the whole forest is durable and nothing is resident.
func (s *run) grown(ctx context.Context, roots []*dsh.Handle) error {
	for _, root := range roots {
		if err := root.WhenIdle(ctx); err != nil {
			return err
		}
	}
	return s.rec.quiet(ctx)
}

// race runs the workers: follow-ups to random children, some scoped
// drains of random resident children.
func (s *run) race(ctx context.Context, report *Report) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range s.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				outcome := s.step(ctx, i)
				mu.Lock()
				outcome.apply(report)
				mu.Unlock()
			}
		}()
	}
	for i := range s.cfg.Followups {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}

// outcome is what one step did.
type outcome struct {
	accepted, rejected, drained bool
	code, violation             string
}

func (o outcome) apply(r *Report) {
	switch {
	case o.accepted:
		r.Accepted++
	case o.rejected:
		r.Rejected++
		if r.ByCode == nil {
			r.ByCode = map[string]int{}
		}
		r.ByCode[o.code]++
	}
	if o.drained {
		r.Drains++
	}
	if o.violation != "" {
		r.Violations = append(r.Violations, o.violation)
	}
}

// step sends follow-up i to a random known child and, one time in ten,
// first drains a random resident child's descendants. When the child's
// parent is not resident, the follow-up ("hold 5ms") goes to the nearest
// ancestor whose parent is, waking it so that later steps reach further
// down while it is resident.
func (s *run) step(ctx context.Context, i int) outcome {
	var o outcome
	if s.intn(10) == 0 {
		if h := s.rec.randomResident(s.intn); h != nil {
			if err := s.rt.Drain(ctx, h); err != nil {
				o.violation = "scoped drain: " + err.Error()
			}
			o.drained = true
		}
	}
	target := s.rec.randomChild(ctx, s.intn)
	child, p := s.rec.reachable(target)
	text := "f" + strconv.Itoa(i)
	if child != target {
		text = "hold 5ms"
	}
	id, err := s.rt.Send(ctx, p, child, event.Text(text))
	if err != nil {
		o.rejected = true
		var typedErr *fault.Error
		if errors.As(err, &typedErr) {
			o.code = string(typedErr.Code)
		}
		if !typed(err) && o.violation == "" {
			o.violation = fmt.Sprintf("follow-up %d to %s: untyped error: %v", i, child, err)
		}
		return o
	}
	o.accepted = true
	s.rec.accept(child, id)
	return o
}

// typed reports whether err is one of the typed rejections a follow-up may
// meet under drains and settlements.
func typed(err error) bool {
	for _, code := range []error{fault.Draining, fault.Unauthorized, fault.ActivationClosing, fault.NotResumable} {
		if errorsIs(err, code) {
			return true
		}
	}
	return false
}
