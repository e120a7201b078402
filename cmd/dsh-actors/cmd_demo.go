package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/dsh-actors/dsh-actors/subagent"
	"github.com/google/uuid"
)

const demoUsage = "usage: dsh-actors demo [--store DIR] [--compression zstd|none]"

// demoRefresh is how often the live catalog tree is redrawn.
const demoRefresh = 150 * time.Millisecond

// runDemo runs the main job in a terminal: a top-level scripted agent
// spawns children that spawn grandchildren, then sends follow-ups; the
// live catalog tree is shown with statuses while it runs (redrawn in place
// on a terminal, plain lines otherwise); then the tree is drained
// child-first. Every subagent/start and subagent/end is printed, and at
// the end the list of every parent. The sessions stay in the store for
// `dsh-actors list` and `show`.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("demo")
	store := storeFlag(flags)
	compression := compressionFlag(flags)
	err := parseFlagsOnly(flags, args)
	if err == nil {
		err = checkCompression(*compression)
	}
	if err != nil {
		return usageError(stderr, demoUsage, flags, err)
	}
	set, err := openRuntime(*store, dsh.Options{Logger: warnLogger(stderr)}, storeChoice{compression: *compression})
	if err != nil {
		return failure(stderr, "demo", err)
	}
	d := newDemo(set, newScreen(stdout))
	runErr := d.run(ctx)
	if err := set.close(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return failure(stderr, "demo", runErr)
	}
	fmt.Fprintf(stdout, "sessions are in %s; try: dsh-actors list --store %s %s\n", *store, *store, d.root.ID())
	return 0
}

// demo is one run: the runtime, the service and the top-level agent.
type demo struct {
	rt     *actors.Runtime
	svc    *subagent.Service
	screen *screen
	root   *parent.Handle
	labels sync.Map // child id → label
}

func newDemo(set *runtimeSet, scr *screen) *demo {
	d := &demo{rt: set.rt, svc: set.service, screen: scr}
	d.svc.Subscribe(d.printEdge)
	return d
}

// The demo's script: the top-level agent spawns three children; the first
// two each spawn a grandchild that works for a while; then it sends
// follow-ups to a waiting child and to one still running.
const (
	demoGrow = "spawn researcher: spawn reader: sleep 1200ms\n" +
		"spawn writer: spawn editor: sleep 1500ms\n" +
		"spawn reviewer: sleep 600ms"
	demoWork = 400 * time.Millisecond
)

// run drives the demo: grow, follow up, watch, drain, list.
func (d *demo) run(ctx context.Context) error {
	var err error
	d.root, err = d.rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "demo-" + uuid.NewString()[:8]}})
	if err != nil {
		return err
	}
	d.screen.line(fmt.Sprintf("top-level agent %s", d.root.ID()))
	stopWatching := d.watch(ctx)
	defer stopWatching()
	spawned, err := d.turn(ctx, demoGrow)
	if err != nil {
		return err
	}
	if err := d.pause(ctx, demoWork); err != nil {
		return err
	}
	followups := fmt.Sprintf("send %s: reply the reader is still reading\nsend %s: reply approved",
		spawned["researcher"], spawned["reviewer"])
	if _, err := d.turn(ctx, followups); err != nil {
		return err
	}
	if err := d.pause(ctx, demoWork); err != nil {
		return err
	}
	d.screen.line("draining every continuable descendant of " + d.root.ID() + " (child-first)")
	if err := d.svc.DrainContinuableDescendants(ctx, []*parent.Handle{d.root}); err != nil {
		return err
	}
	stopWatching()
	return d.listAll(ctx)
}

// turn runs one top-level turn to its end and returns the children it
// spawned, by label.
func (d *demo) turn(ctx context.Context, script string) (map[string]string, error) {
	d.screen.line("> " + strings.ReplaceAll(script, "\n", " | "))
	before := d.root.Session().Len()
	if _, err := d.root.Followup(ctx, event.Text(script), event.Source{Kind: "user"}); err != nil {
		return nil, err
	}
	if err := d.root.Activation().WhenIdle(ctx); err != nil {
		return nil, err
	}
	spawned := map[string]string{}
	for _, reply := range replies(d.root.Session().Events()[before:]) {
		d.screen.line("< " + reply)
		if fields := strings.Fields(reply); len(fields) == 3 && fields[0] == "spawned" {
			spawned[fields[1]] = fields[2]
			d.labels.Store(fields[2], fields[1])
		}
	}
	return spawned, nil
}

func (d *demo) pause(ctx context.Context, wait time.Duration) error {
	select {
	case <-time.After(wait):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// replies are the texts of the assistant messages in events.
func replies(events []session.Event) []string {
	var texts []string
	for _, e := range events {
		if e.Type != vocab.TypeAssistantMessage {
			continue
		}
		var m struct {
			Message struct{ Content []event.Block }
		}
		if json.Unmarshal(e.Data, &m) == nil {
			for _, b := range m.Message.Content {
				texts = append(texts, b.Text)
			}
		}
	}
	return texts
}

// printEdge prints one lifecycle event.
func (d *demo) printEdge(ev subagent.Event) {
	switch e := ev.(type) {
	case *subagent.StartEvent:
		d.screen.line(fmt.Sprintf("%-14s %s %s provider=%s parent=%s", vocab.TypeSubagentStart, e.ID, d.label(e.ID), e.Provider, e.ParentID))
	case *subagent.EndEvent:
		msg := ""
		if e.LastAssistantMessage != nil {
			msg = fmt.Sprintf(" lastAssistantMessage=%q", textOf(e.LastAssistantMessage))
		}
		d.screen.line(fmt.Sprintf("%-14s %s %s stopReason=%s%s", vocab.TypeSubagentEnd, e.ID, d.label(e.ID), e.StopReason, msg))
	}
}

// label is the child's durable label, from the spawn reply or its
// descriptor.
func (d *demo) label(id string) string {
	if label, ok := d.labels.Load(id); ok {
		return "(" + label.(string) + ")"
	}
	live := d.rt.Sessions().Get(id)
	if live == nil {
		return ""
	}
	for _, e := range live.Events() {
		if e.Type == vocab.TypeSubagentDescriptor {
			if data, err := descriptor.Parse(e.Data); err == nil {
				d.labels.Store(id, data.Label)
				return "(" + data.Label + ")"
			}
		}
	}
	return ""
}

func textOf(blocks []event.Block) string {
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, " ")
}

// watch redraws the catalog tree until the returned stop is called
// (idempotent).
func (d *demo) watch(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(demoRefresh)
		defer ticker.Stop()
		for {
			d.screen.tree(d.treeLines(ctx))
			select {
			case <-ticker.C:
			case <-ctx.Done():
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
			d.screen.tree(d.treeLines(context.WithoutCancel(ctx)))
			d.screen.freeze()
		})
	}
}

// treeLines renders the catalog below the root, depth first.
func (d *demo) treeLines(ctx context.Context) []string {
	lines := []string{"catalog of " + d.root.ID() + ":"}
	var walk func(id, indent string)
	walk = func(id, indent string) {
		entries, err := d.svc.ListChildren(ctx, id)
		if err != nil {
			return
		}
		for _, e := range entries {
			lines = append(lines, indent+"- "+e.String())
			if e.Kind == query.KindChild {
				walk(e.ID, indent+"  ")
			}
		}
	}
	walk(d.root.ID(), "  ")
	return lines
}

// listAll prints the list_agents rendering of every parent in the tree.
func (d *demo) listAll(ctx context.Context) error {
	queue := []string{d.root.ID()}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		entries, err := d.svc.ListChildren(ctx, id)
		if err != nil {
			return err
		}
		if len(entries) == 0 {
			continue
		}
		d.screen.line("list " + id + ":\n" + query.RenderListAgents(entries))
		for _, e := range entries {
			queue = append(queue, e.ID)
		}
	}
	return nil
}

// screen prints event lines and a tree block. On a terminal the tree is
// redrawn in place below the event lines; otherwise each distinct tree is
// printed once, as plain lines.
type screen struct {
	mu     sync.Mutex
	w      io.Writer
	tty    bool
	drawn  []string // the tree block currently on screen (tty)
	last   string   // the last tree printed (plain)
	frozen bool
}

func newScreen(w io.Writer) *screen {
	f, ok := w.(*os.File)
	tty := false
	if ok {
		if info, err := f.Stat(); err == nil {
			tty = info.Mode()&os.ModeCharDevice != 0
		}
	}
	return &screen{w: w, tty: tty}
}

// line prints one event line above the tree.
func (s *screen) line(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.erase()
	fmt.Fprintln(s.w, text)
	s.draw(s.drawn)
}

// tree shows lines as the current tree.
func (s *screen) tree(lines []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.frozen {
		return
	}
	if !s.tty {
		if joined := strings.Join(lines, "\n"); joined != s.last {
			s.last = joined
			fmt.Fprintln(s.w, joined)
		}
		return
	}
	s.erase()
	s.draw(lines)
}

// freeze leaves the last tree on screen; later lines print below it.
func (s *screen) freeze() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frozen = true
	s.drawn = nil
}

// erase moves the cursor up over the drawn tree and clears it (tty only).
func (s *screen) erase() {
	if s.tty && len(s.drawn) > 0 {
		fmt.Fprintf(s.w, "\x1b[%dA\x1b[J", len(s.drawn))
	}
}

// draw prints the tree and remembers it (tty only).
func (s *screen) draw(lines []string) {
	if !s.tty || s.frozen {
		s.drawn = nil
		return
	}
	for _, l := range lines {
		fmt.Fprintln(s.w, l)
	}
	s.drawn = lines
}
