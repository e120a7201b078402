package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
)

// TurnsResult is what Turns measured.
type TurnsResult struct {
	Agents, Turns int           // agents and turns per agent
	Events        int           // events logged by all agents during the timed part
	Elapsed       time.Duration // from the first follow-up until every log is durable
	// Lines are the encoded event lines of the first agent's log, the
	// workload of the raw baseline.
	Lines [][]byte
}

// EventsPerSec is Events over Elapsed.
func (r TurnsResult) EventsPerSec() float64 { return float64(r.Events) / r.Elapsed.Seconds() }

// TurnsPerSec is Agents×Turns over Elapsed.
func (r TurnsResult) TurnsPerSec() float64 { return float64(r.Agents*r.Turns) / r.Elapsed.Seconds() }

// Turns runs turns scripted `reply` turns on each of agents top-level
// agents of a runtime opened with dsh.Open over a JSONL store in dir (plain
// JSONL, real fsync, write-behind group commit), all agents in parallel
// (PromptSession, then WhenIdle), and times it until Close returned, every
// log flushed. The logs are read back afterwards from a runtime opened on
// the store again.
func Turns(ctx context.Context, dir string, agents, turns int) (res TurnsResult, err error) {
	ids, elapsed, err := runTurns(ctx, dir, agents, turns)
	if err != nil {
		return res, err
	}
	res.Agents, res.Turns, res.Elapsed = agents, turns, elapsed
	rt, err := dsh.Open(dsh.Options{Dir: dir, NoIndex: true})
	if err != nil {
		return res, err
	}
	defer closeRuntime(rt, &err)
	for i, id := range ids {
		history, err := rt.History(ctx, id)
		if err != nil {
			return res, err
		}
		res.Events += len(history.Events)
		if i > 0 {
			continue
		}
		for _, e := range history.Events {
			line, err := json.Marshal(e)
			if err != nil {
				return res, err
			}
			res.Lines = append(res.Lines, append(line, '\n'))
		}
	}
	return res, nil
}

// runTurns starts agents agents over a new store in dir, runs their turns
// in parallel and returns their ids and the time from the first prompt
// until the runtime closed.
func runTurns(ctx context.Context, dir string, agents, turns int) (ids []string, elapsed time.Duration, err error) {
	rt, err := dsh.Open(dsh.Options{Dir: dir, Compression: "none", NoIndex: true})
	if err != nil {
		return nil, 0, err
	}
	handles := make([]*dsh.Handle, agents)
	for i := range handles {
		if handles[i], err = rt.StartAgent(ctx, ""); err != nil {
			return nil, 0, errors.Join(err, rt.Close())
		}
		ids = append(ids, handles[i].ID())
	}
	content := event.Text("reply the quick brown fox jumps over the lazy dog")
	var wg sync.WaitGroup
	errs := make([]error, agents)
	start := time.Now()
	for i, h := range handles {
		wg.Go(func() {
			for range turns {
				if _, err := rt.PromptSession(ctx, h.ID(), content, event.Source{Kind: event.SourceUser}); err != nil {
					errs[i] = err
					return
				}
			}
			errs[i] = h.WhenIdle(ctx)
		})
	}
	wg.Wait()
	err = errors.Join(append(errs, rt.Close())...)
	return ids, time.Since(start), err
}

// RawAppend appends lines to one fresh file in dir through a RawLog, from
// writers goroutines sharing the lines, each waiting until its line is
// durable, and times it until everything is durable.
func RawAppend(dir string, writers int, lines [][]byte) (time.Duration, error) {
	f, err := os.CreateTemp(dir, "raw-*.jsonl")
	if err != nil {
		return 0, err
	}
	path := f.Name()
	_ = f.Close()
	defer os.Remove(path)
	l, err := CreateRawLog(path)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := w; i < len(lines); i += writers {
				l.Append(lines[i], true)
			}
		})
	}
	wg.Wait()
	err = l.Close()
	return time.Since(start), err
}

// RawPipelined appends lines to each of files fresh files in dir through
// one RawLog per file, from one producer per file that never waits (what a
// write-behind log does), and times it until everything is durable.
func RawPipelined(dir string, files int, lines [][]byte) (time.Duration, error) {
	logs := make([]*RawLog, files)
	var paths []string
	defer func() {
		for _, p := range paths {
			os.Remove(p)
		}
	}()
	for i := range logs {
		path := filepath.Join(dir, fmt.Sprintf("pipelined-%d.jsonl", i))
		l, err := CreateRawLog(path)
		if err != nil {
			for _, l := range logs[:i] {
				_ = l.Close()
			}
			return 0, err
		}
		logs[i], paths = l, append(paths, path)
	}
	start := time.Now()
	errs := make([]error, files)
	var wg sync.WaitGroup
	for i, l := range logs {
		wg.Go(func() {
			for _, line := range lines {
				l.Append(line, false)
			}
			errs[i] = l.Close()
		})
	}
	wg.Wait()
	return time.Since(start), errors.Join(errs...)
}

func repeat(lines [][]byte, n int) [][]byte {
	all := make([][]byte, 0, n*len(lines))
	for range n {
		all = append(all, lines...)
	}
	return all
}

// turnsRow is row 2: one agent, then many in parallel, each against two
// raw group-commit rates of the same lines measured right after it: one
// file fed by 64 writers that each wait until their line is durable (the
// group-commit rate, which the target is taken against),
// and one file per agent fed by a producer that never waits (the stricter,
// like-for-like ceiling of write-behind logging, informational).
func turnsRow(ctx context.Context, cfg Config) ([]Line, error) {
	var lines []Line
	for i, shape := range []struct{ agents, turns int }{{1, cfg.SoloTurns}, {cfg.ParallelAgents, cfg.ParallelTurns}} {
		dir, err := os.MkdirTemp(cfg.Dir, fmt.Sprintf("turns-%d-*", shape.agents))
		if err != nil {
			return nil, err
		}
		res, err := Turns(ctx, filepath.Join(dir, "store"), shape.agents, shape.turns)
		if err != nil {
			return nil, err
		}
		waiting, err := RawAppend(dir, 64, repeat(res.Lines, shape.agents))
		if err != nil {
			return nil, err
		}
		pipelined, err := RawPipelined(dir, shape.agents, res.Lines)
		if err != nil {
			return nil, err
		}
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		events := float64(len(res.Lines) * shape.agents)
		name := "reply turns, 1 agent"
		if shape.agents > 1 {
			name = fmt.Sprintf("reply turns, %d agents in parallel", shape.agents)
		}
		ours := PerSec("runtime", res.EventsPerSec(), "events")
		a, err := Compare(fmt.Sprintf("2%c", 'a'+2*i), name, ours,
			PerSec("raw group commit, 64 waiting writers", events/waiting.Seconds(), "events"),
			OursOverBase, &Target{Op: AtLeast, Value: 0.30, Percent: true})
		if err != nil {
			return nil, err
		}
		a.Note = fmt.Sprintf("%s turns/s (%d×%d turns, %.1f events/turn); every event logged to a JSONL store with fsync, write-behind, flushed (durable) by Close at the end; raw: the same lines",
			FormatCount(res.TurnsPerSec()), shape.agents, shape.turns, float64(res.Events)/float64(shape.agents*shape.turns))
		b, err := Compare(fmt.Sprintf("2%c", 'b'+2*i), name+", vs pipelined", ours,
			PerSec("raw pipelined group commit", events/pipelined.Seconds(), "events"), OursOverBase, nil)
		if err != nil {
			return nil, err
		}
		b.Note = "raw pipelined: the same lines, one file per agent, one producer per file that never waits, one fdatasync per pending batch"
		lines = append(lines, a, b)
	}
	return lines, nil
}
