package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
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
	rt, err := openRuntime(*store, dsh.Options{Logger: warnLogger(stderr), NoIndex: true}, storeChoice{compression: *compression})
	if err != nil {
		return failure(stderr, "demo", err)
	}
	d := &demo{rt: rt, screen: newScreen(stdout)}
	stopEdges := rt.Subscribe(d.printEdge)
	runErr := d.run(ctx)
	if err := rt.Close(); err != nil && runErr == nil {
		runErr = err
	}
	stopEdges()
	if runErr != nil {
		return failure(stderr, "demo", runErr)
	}
	fmt.Fprintf(stdout, "sessions are in %s; try: dsh-actors list --store %s %s\n", *store, *store, d.root.ID())
	return 0
}

// demo is one run: the runtime and the top-level agent. It reads the
// catalog from the logs (no derived index), as a live view must.
type demo struct {
	rt     *dsh.Runtime
	screen *screen
	root   *dsh.Handle
	labels sync.Map // child id → label
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
	d.root, err = d.rt.StartAgent(ctx, "demo-"+uuid.NewString()[:8])
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
	if err := d.rt.Drain(ctx, d.root); err != nil {
		return err
	}
	stopWatching()
	return d.listAll(ctx)
}

// turn runs one top-level turn to its end and returns the children it
// spawned, by label.
func (d *demo) turn(ctx context.Context, script string) (map[string]string, error) {
	d.screen.line("> " + strings.ReplaceAll(script, "\n", " | "))
	before, err := d.rt.History(ctx, d.root.ID())
	if err != nil {
		return nil, err
	}
	if _, err := d.rt.Prompt(ctx, d.root.ID(), script); err != nil {
		return nil, err
	}
	if err := d.root.WhenIdle(ctx); err != nil {
		return nil, err
	}
	after, err := d.rt.History(ctx, d.root.ID())
	if err != nil {
		return nil, err
	}
	spawned := map[string]string{}
	for _, reply := range replies(after.Events[len(before.Events):]) {
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
func replies(events []dsh.Event) []string {
	var texts []string
	for _, e := range events {
		if p, err := e.Payload(); err == nil {
			if m, ok := p.(event.AssistantMessage); ok {
				for _, b := range m.Content {
					texts = append(texts, b.Text)
				}
			}
		}
	}
	return texts
}

// printEdge prints a child's start or end as a subagent/start or
// subagent/end line.
func (d *demo) printEdge(n dsh.Notice) {
	switch n.Kind {
	case dsh.ChildStarted:
		if n.Label != "" {
			d.labels.LoadOrStore(n.SessionID, n.Label)
		}
		d.screen.line(fmt.Sprintf("%-14s %s %s provider=%s parent=%s", "subagent/start", n.SessionID, d.label(n.SessionID), n.Provider, n.ParentSessionID))
	case dsh.ChildEnded:
		msg := ""
		if n.End.LastAssistantMessage != nil {
			msg = fmt.Sprintf(" lastAssistantMessage=%q", textOf(n.End.LastAssistantMessage))
		}
		d.screen.line(fmt.Sprintf("%-14s %s %s stopReason=%s%s", "subagent/end", n.SessionID, d.label(n.SessionID), n.End.StopReason, msg))
	}
}

// label is the child's durable label, from the spawn reply or its start,
// in parentheses; "" when neither gave one.
func (d *demo) label(id string) string {
	if label, ok := d.labels.Load(id); ok {
		return "(" + label.(string) + ")"
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
		children, err := d.rt.Children(ctx, id)
		if err != nil {
			return
		}
		for _, c := range children {
			lines = append(lines, indent+"- "+dsh.RenderChildren([]agent.Child{c}))
			if c.Diagnostic == "" {
				walk(c.ID, indent+"  ")
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
		children, err := d.rt.Children(ctx, id)
		if err != nil {
			return err
		}
		if len(children) == 0 {
			continue
		}
		d.screen.line("list " + id + ":\n" + dsh.RenderChildren(children))
		for _, c := range children {
			queue = append(queue, c.ID)
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
