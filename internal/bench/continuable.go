package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/storegen"
)

// World is a runtime opened with dsh.Open over a JSONL store (plain
// JSONL, as the raw baselines write) with a top-level agent "parent": the
// set-up of the continuable measurements.
type World struct {
	Runtime *dsh.Runtime
	Parent  *dsh.Handle
	Root    string

	// The ChildEnded notices: the listener only appends the child id
	// (the harness must not weigh on the drain it times); WaitEnd folds
	// them into per-child counts.
	mu      sync.Mutex
	endSeen *sync.Cond
	ends    []string       // child ids, one per ended epoch, in order
	folded  int            // how many of ends are counted in pending
	pending map[string]int // notices per child id not yet consumed by WaitEnd
	stop    func()
}

// OpenWorld opens a World over root; fsync false runs the store without
// fsync ("clean" sessions, so the runtime's own costs show). The agent
// "parent" is resumed when root already holds it, created otherwise.
func OpenWorld(ctx context.Context, root string, fsync bool) (*World, error) {
	rt, err := dsh.Open(dsh.Options{Dir: root, Compression: "none", NoSync: !fsync, NewAgent: benchAgent})
	if err != nil {
		return nil, err
	}
	w := &World{Runtime: rt, Root: root, pending: map[string]int{}}
	w.endSeen = sync.NewCond(&w.mu)
	w.stop = rt.Subscribe(func(n dsh.Notice) {
		if n.Kind == dsh.ChildEnded {
			w.mu.Lock()
			w.ends = append(w.ends, n.SessionID)
			w.mu.Unlock()
			w.endSeen.Broadcast()
		}
	})
	if w.Parent, err = rt.OpenAgent(ctx, "parent"); err != nil {
		return nil, errors.Join(err, w.close())
	}
	return w, nil
}

// WaitPrompt is the prompt of a turn that runs until it is cancelled.
const WaitPrompt = "wait until cancelled"

// benchAgent is the scripted agent, except that a turn opened by
// WaitPrompt blocks until its context is cancelled, with no timer: a
// forest of resident children costs the runtime, not the agents' own
// timers.
func benchAgent(opts agent.Options) agent.Agent {
	scripted := agent.Scripted(opts)
	return agent.Func(func(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
		if len(msg.Content) == 1 && msg.Content[0].Text == WaitPrompt {
			<-ctx.Done()
			return agent.Aborted, nil
		}
		return scripted.RunTurn(ctx, host, msg)
	})
}

// WaitEnd blocks until an epoch of child id has ended (ChildEnded) and
// consumes that notice, so the next WaitEnd waits for the next epoch.
func (w *World) WaitEnd(ctx context.Context, id string) error {
	stop := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.endSeen.Broadcast()
	})
	defer stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		for ; w.folded < len(w.ends); w.folded++ {
			w.pending[w.ends[w.folded]]++
		}
		if w.pending[id] > 0 {
			w.pending[id]--
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		w.endSeen.Wait()
	}
}

// Start starts a continuable child of p with prompt (Spawn) and returns
// its id at inbox acceptance.
func (w *World) Start(ctx context.Context, p *dsh.Handle, prompt string) (string, error) {
	return w.Runtime.Spawn(ctx, p, "bench", event.Text(prompt))
}

// Followup sends text to child id of w.Parent and returns at acceptance.
func (w *World) Followup(ctx context.Context, id, text string) error {
	_, err := w.Runtime.Send(ctx, w.Parent, id, event.Text(text))
	return err
}

// Close closes the runtime (draining every child first), which closes its store.
func (w *World) Close(context.Context) error {
	return w.close()
}

func (w *World) close() error {
	err := w.Runtime.Close()
	w.stop()
	return err
}

// SettleResult holds the interleaved samples of Settle.
type SettleResult struct {
	// Child: Spawn of a `reply` child until its epoch ended (turn run,
	// log flushed, Activation disposed).
	Child Samples
	// Actor: a bare protoactor actor spawned and stopped.
	Actor Samples
}

// Settle measures n rounds, interleaved: one continuable child from
// Spawn until settled, and one bare protoactor spawn+stop.
func Settle(ctx context.Context, root string, sync bool, n int) (res SettleResult, err error) {
	w, err := OpenWorld(ctx, root, sync)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, w.Close(ctx)) }()
	system := QuietSystem()
	defer system.Shutdown()
	props := EchoProps()
	var oerr error
	for i := range n + min(n, 20) {
		var r SettleResult
		r.Child.Time(func() {
			var id string
			if id, oerr = w.Start(ctx, w.Parent, "reply done"); oerr == nil {
				oerr = w.WaitEnd(ctx, id)
			}
		})
		if oerr != nil {
			return res, oerr
		}
		r.Actor.Time(func() { oerr = system.Root.StopFuture(system.Root.Spawn(props)).Wait() })
		if oerr != nil {
			return res, oerr
		}
		if i >= min(n, 20) {
			res.Child = append(res.Child, r.Child...)
			res.Actor = append(res.Actor, r.Actor...)
		}
	}
	return res, nil
}

// Resident measures n follow-ups (until acceptance) to a resident child:
// one that settled once, then was woken and owns a grandchild sleeping
// forever, so it stays waiting between rounds. Its turn runs to idle,
// untimed, after each round.
func Resident(ctx context.Context, root string, n int) (res Samples, err error) {
	w, err := OpenWorld(ctx, root, false)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, w.Close(ctx)) }()
	child, err := w.Start(ctx, w.Parent, "reply ready")
	if err != nil {
		return nil, err
	}
	if err := w.WaitEnd(ctx, child); err != nil {
		return nil, err
	}
	if err := w.Followup(ctx, child, "spawn holder: sleep 1h"); err != nil {
		return nil, err
	}
	h, live := w.Runtime.Agent(child)
	for ; !live; h, live = w.Runtime.Agent(child) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		time.Sleep(100 * time.Microsecond)
	}
	if err := h.WhenIdle(ctx); err != nil {
		return nil, err
	}
	var ferr error
	for i := range n + min(n, 50) {
		var s Samples
		s.Time(func() { ferr = w.Followup(ctx, child, "reply again") })
		if ferr != nil {
			return nil, ferr
		}
		if err := h.WhenIdle(ctx); err != nil {
			return nil, err
		}
		if i >= min(n, 50) {
			res = append(res, s...)
		}
	}
	return res, nil
}

// ColdResume measures n follow-ups (until acceptance) to a settled child
// whose stored log has about events events, so each is a cold resume:
// the repairing load of the log, a new Activation, admission. The child's
// epoch settles and the log is rewritten to the same size between rounds,
// untimed.
func ColdResume(ctx context.Context, root string, events, n int) (res Samples, err error) {
	log := storegen.ContinuableChild("cold-child", "parent", events)
	if _, err := storegen.Write(root, log); err != nil {
		return nil, err
	}
	w, err := OpenWorld(ctx, root, false)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, w.Close(ctx)) }()
	var ferr error
	for range n {
		res.Time(func() { ferr = w.Followup(ctx, "cold-child", "reply again") })
		if ferr != nil {
			return nil, ferr
		}
		if err := w.WaitEnd(ctx, "cold-child"); err != nil {
			return nil, err
		}
		if _, err := storegen.Write(root, log); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// InspectLog times n History reads of the stored log id under root (a
// runtime opened once, without fsync, holding id asleep: History reads the
// stored log without resuming it) and returns the samples and the log's
// size in bytes: the reader's own throughput, the baseline of a cold
// resume.
func InspectLog(ctx context.Context, root, id string, n int) (res Samples, size int64, err error) {
	rt, err := dsh.Open(dsh.Options{Dir: root, NoSync: true, NoIndex: true})
	if err != nil {
		return nil, 0, err
	}
	defer func() { err = errors.Join(err, rt.Close()) }()
	for range n {
		var ierr error
		res.Time(func() { _, ierr = rt.History(ctx, id) })
		if ierr != nil {
			return nil, 0, ierr
		}
	}
	size, err = logSize(root, id)
	return res, size, err
}

// logSize is the size in bytes of the files in the folder of session id
// under root (its log), found by name.
func logSize(root, id string) (int64, error) {
	var size int64
	found := false
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(path)) != id {
			return err
		}
		info, err := d.Info()
		size, found = size+info.Size(), true
		return err
	})
	if err == nil && !found {
		err = fmt.Errorf("no log of %s under %s", id, root)
	}
	return size, err
}

// coldResumeRate is the line comparing a cold resume's read rate (log
// bytes over the follow-up's median) with Inspect's on the same log, as
// left in root by ColdResume.
func coldResumeRate(ctx context.Context, id, root string, events int, cold Samples) (Line, error) {
	inspect, size, err := InspectLog(ctx, root, "cold-child", max(5, len(cold)))
	if err != nil {
		return Line{}, err
	}
	mb := float64(size) / 1e6
	l, err := Compare(id, fmt.Sprintf("cold resume vs History read rate, %d-event log", events),
		PerSec("cold resume", mb/(cold.Median()/1e9), "MB"), PerSec("History", mb/(inspect.Median()/1e9), "MB"),
		OursOverBase, &Target{Op: AtLeast, Value: 0.6, Percent: true})
	if err != nil {
		return Line{}, err
	}
	l.Note = fmt.Sprintf("%.1f MB log; medians of %d follow-ups that cold-resume the child (until accepted) and of %d History reads of it asleep",
		mb, len(cold), len(inspect))
	return l, nil
}

// continuableRow is row 5.
func continuableRow(ctx context.Context, cfg Config) ([]Line, error) {
	var lines []Line
	for i, synced := range []bool{true, false} {
		dir, err := os.MkdirTemp(cfg.Dir, "settle-*")
		if err != nil {
			return nil, err
		}
		res, err := Settle(ctx, dir, synced, cfg.SettleRounds)
		if err != nil {
			return nil, err
		}
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		name, target := "Spawn → settled (fsync)", (*Target)(nil)
		if !synced {
			name, target = "Spawn → settled (no fsync)", &Target{Op: AtMost, Value: 10}
		}
		l, err := Compare(fmt.Sprintf("5%c", 'a'+i), name, Ns("child", res.Child.Median()),
			Ns("protoactor spawn+stop", res.Actor.Median()), OursOverBase, target)
		if err != nil {
			return nil, err
		}
		l.Note = fmt.Sprintf("medians of %d interleaved rounds; a child runs one scripted reply turn, is flushed and disposed", len(res.Child))
		lines = append(lines, l)
	}

	dir, err := os.MkdirTemp(cfg.Dir, "resident-*")
	if err != nil {
		return nil, err
	}
	resident, err := Resident(ctx, dir, cfg.ResidentRounds)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	base := Ns("resident child", resident.Median())
	type point struct{ events, ns float64 }
	var points []point
	var rates []Line
	for i, size := range cfg.ResumeEvents {
		dir, err := os.MkdirTemp(cfg.Dir, "cold-*")
		if err != nil {
			return nil, err
		}
		cold, err := ColdResume(ctx, dir, size, resumeRounds(cfg.ResumeRounds, size))
		if err != nil {
			return nil, err
		}
		events := float64(len(storegen.ContinuableChild("x", "parent", size).Events))
		if size >= rateMinEvents {
			rate, err := coldResumeRate(ctx, "", dir, int(events), cold)
			if err != nil {
				return nil, err
			}
			rates = append(rates, rate)
		}
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		l, err := Compare(fmt.Sprintf("5%c", 'c'+i), fmt.Sprintf("follow-up, cold resume, %d-event log", int(events)),
			Ns("cold resume", cold.Median()), base, OursOverBase, nil)
		if err != nil {
			return nil, err
		}
		l.Note = fmt.Sprintf("%s per stored event (median of %d; the resident child's follow-up is the baseline, medians of %d)",
			FormatNs(cold.Median()/events), len(cold), len(resident))
		lines = append(lines, l)
		points = append(points, point{events, cold.Median()})
	}
	if len(points) >= 2 {
		// Linear growth keeps the cost per stored event flat (or falling,
		// as the fixed cost is spread thinner); a superlinear resume makes
		// it grow with the log.
		small, large := points[len(points)-2], points[len(points)-1]
		id := fmt.Sprintf("5%c", 'c'+len(points))
		l, err := Compare(id, fmt.Sprintf("cold resume cost per stored event, %d-event log", int(large.events)),
			NsPer("cold resume", large.ns/large.events, "event"),
			NsPer(fmt.Sprintf("same, %d-event log", int(small.events)), small.ns/small.events, "event"),
			OursOverBase, &Target{Op: AtMost, Value: 2})
		if err != nil {
			return nil, err
		}
		l.Note = fmt.Sprintf("the log is %.0f× larger; linear growth keeps this ratio at or below 1, quadratic would make it ~%.0f; the ≤ 2× bound is this command's own reading of \"linear\"",
			large.events/small.events, large.events/small.events)
		lines = append(lines, l)
	}
	next := 'c' + len(points)
	if len(points) >= 2 {
		next++
	}
	for _, l := range rates {
		l.ID = fmt.Sprintf("5%c", next)
		next++
		lines = append(lines, l)
	}
	return lines, nil
}

// rateMinEvents is the smallest cold-resumed log whose read rate row 5
// compares with Inspect's (smaller logs measure the fixed cost).
const rateMinEvents = 1_000

// resumeRounds is how many cold resumes of a size-event log to time:
// rounds up to 1,000 events, then fewer as logs grow (at least 3).
func resumeRounds(rounds, size int) int {
	if size <= 1000 {
		return max(rounds, 1)
	}
	return max(3, rounds*1000/size)
}

// DrainResult is what Drain measured.
type DrainResult struct {
	Children int           // continuable descendants drained
	Drain    time.Duration // DrainContinuableDescendants of the forest
	Build    time.Duration // starting the forest (untimed for the ratio)
}

// Drain grows a forest of fanout children per node down to depth levels
// below a fresh top-level agent (every child in a turn that waits until
// cancelled), collects the garbage of that build, then times the
// child-first scoped drain of that agent's continuable descendants. The
// store runs without fsync (clean sessions).
func Drain(ctx context.Context, root string, fanout, depth int) (res DrainResult, err error) {
	w, err := OpenWorld(ctx, root, false)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, w.Close(ctx)) }()
	p, err := w.Runtime.StartAgent(ctx, "")
	if err != nil {
		return res, err
	}
	start := time.Now()
	ids, err := w.Grow(ctx, p, fanout, depth)
	if err != nil {
		return res, err
	}
	res.Build, res.Children = time.Since(start), len(ids)
	runtime.GC() // the forest's garbage is not the drain's cost (StopTree does the same)
	start = time.Now()
	if err := w.Runtime.Drain(ctx, p); err != nil {
		return res, err
	}
	res.Drain = time.Since(start)
	for _, id := range ids {
		if err := w.WaitEnd(ctx, id); err != nil {
			return res, err
		}
	}
	return res, nil
}

// Grow starts fanout children below p, down to depth levels, each in a
// turn that waits until cancelled (WaitPrompt), from 8 concurrent
// starters per level, and returns their ids once every one of them is
// live (or the first error, with the ids started so far).
func (w *World) Grow(ctx context.Context, p *dsh.Handle, fanout, depth int) ([]string, error) {
	level := []*dsh.Handle{p}
	var all []string
	for range depth {
		var next []*dsh.Handle
		var mu sync.Mutex
		var wg sync.WaitGroup
		var firstErr error
		jobs := make(chan *dsh.Handle)
		for range 8 {
			wg.Go(func() {
				for owner := range jobs {
					id, err := w.Start(ctx, owner, WaitPrompt)
					h, live := w.Runtime.Agent(id)
					mu.Lock()
					switch {
					case err != nil:
						firstErr = cmpErr(firstErr, err)
					case !live:
						firstErr = cmpErr(firstErr, fmt.Errorf("child %s is not live after its start", id))
					default:
						next = append(next, h)
						all = append(all, id)
					}
					mu.Unlock()
				}
			})
		}
		for _, owner := range level {
			for range fanout {
				jobs <- owner
			}
		}
		close(jobs)
		wg.Wait()
		if firstErr != nil {
			return all, firstErr
		}
		level = next
	}
	return all, nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// SpawnTree spawns a bare protoactor tree of the given shape (children
// spawned by their parents) and returns its root once every actor has
// started, with the number of actors.
func SpawnTree(system *actor.ActorSystem, fanout, depth int) (*actor.PID, int) {
	var started sync.WaitGroup
	var count atomic.Int64
	var props *actor.Props
	props = actor.PropsFromFunc(func(c actor.Context) {
		if level, ok := c.Message().(int); ok {
			if level < depth {
				for range fanout {
					started.Add(1)
					c.Send(c.Spawn(props), level+1)
				}
			}
			count.Add(1)
			started.Done()
		}
	})
	started.Add(1)
	root := system.Root.Spawn(props)
	system.Root.Send(root, 0)
	started.Wait()
	return root, int(count.Load())
}

// StopTree measures StopFuture(...).Wait on n fresh bare protoactor trees
// of the given shape (spawning them and collecting their garbage is
// untimed).
func StopTree(ctx context.Context, fanout, depth, n int) (res Samples, actors int, err error) {
	system := QuietSystem()
	defer system.Shutdown()
	for range n {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		root, count := SpawnTree(system, fanout, depth)
		actors = count
		runtime.GC()
		var werr error
		res.Time(func() { werr = system.Root.StopFuture(root).Wait() })
		if werr != nil {
			return nil, 0, werr
		}
	}
	return res, actors, nil
}

// drainRow is row 6. Its three measurements are interleaved round by
// round (a drain, a tree stop, a floor), so a change of load on a shared
// machine weighs on all three alike rather than on whichever ran last.
func drainRow(ctx context.Context, cfg Config) ([]Line, error) {
	dir, err := os.MkdirTemp(cfg.Dir, "drain-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	r := drainRounds{fanout: cfg.Fanout, depth: cfg.Depth}
	for i := range cfg.DrainRuns {
		if err := r.round(ctx, filepath.Join(dir, fmt.Sprint(i))); err != nil {
			return nil, err
		}
	}
	return r.lines()
}

// drainRounds collects row 6's interleaved samples.
type drainRounds struct {
	fanout, depth         int
	drains, stops, floors Samples
	last                  DrainResult
	actors, floorAgents   int
}

// round measures one drain of a fresh forest under dir, then one bare
// protoactor tree stop and one drain floor of the same shape.
func (r *drainRounds) round(ctx context.Context, dir string) error {
	res, err := Drain(ctx, dir, r.fanout, r.depth)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	stop, actors, err := StopTree(ctx, r.fanout, r.depth, 1)
	if err != nil {
		return err
	}
	floor, agents, err := DrainFloor(ctx, dir, r.fanout, r.depth, 1)
	if err != nil {
		return err
	}
	r.drains, r.stops, r.floors = append(r.drains, res.Drain), append(r.stops, stop...), append(r.floors, floor...)
	r.last, r.actors, r.floorAgents = res, actors, agents
	return nil
}

// lines are row 6 and its floor, 6f.
func (r *drainRounds) lines() ([]Line, error) {
	l, err := Compare("6", fmt.Sprintf("scoped drain, fan-out %d depth %d (%d agents)", r.fanout, r.depth, r.last.Children+1),
		Ns("drain", r.drains.Median()), Ns(fmt.Sprintf("protoactor StopFuture, %d actors", r.actors), r.stops.Median()),
		OursOverBase, &Target{Op: AtMost, Value: 3})
	if err != nil {
		return nil, err
	}
	l.Note = fmt.Sprintf("%d continuable descendants each in a running turn, clean sessions (no fsync); medians of %d rounds, each a drain, a tree stop and a floor; building the forest took %s",
		r.last.Children, len(r.drains), FormatNs(float64(r.last.Build.Nanoseconds())))
	f, err := Compare("6f", fmt.Sprintf("drain floor: the required steps alone, same shape (%d agents)", r.floorAgents),
		Ns("floor", r.floors.Median()), Ns("protoactor StopFuture", r.stops.Median()), OursOverBase, nil)
	if err != nil {
		return nil, err
	}
	f.Note = fmt.Sprintf("per agent: its running turn cancelled from one manager actor, one line appended to its own log file, its children awaited, its lease record unlinked, its actor stopped and its Terminated counted by the watching manager; no session, inbox, registry or lifecycle state. Of row 6's ratio, this much no runtime of this design can avoid on this machine; row 6's drain is %.2f× this floor",
		r.drains.Median()/r.floors.Median())
	return []Line{l, f}, nil
}
