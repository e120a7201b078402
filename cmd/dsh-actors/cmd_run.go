package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/uuid"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
)

const runUsage = `usage: dsh-actors run ` + modelUsage + ` [--store DIR] [--acp NAME=COMMAND]... "PROMPT"`

// runRun runs PROMPT as one turn of a new top-level agent, printing
// first its session id ("[session ID]"), then the reply as it arrives
// (tool calls and results as one line each), then waits until the
// children it started have settled, printing each child's reply as its
// epoch ends ("[child ID STOP_REASON] REPLY", and "(failed: WHY)" after
// a failed turn), drains child-first
// and flushes. It exits 0 when the turn completed (for a retried model
// call, the last turn of its retry chain), 1 otherwise. The first
// SIGINT/SIGTERM cancels the turn and stops waiting for children.
func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("run")
	store, model, acps := storeFlag(flags), addModelFlags(flags), acpFlag(flags, stderr)
	err := flags.Parse(args)
	switch {
	case err != nil:
	case flags.NArg() != 1:
		err = errors.New("run takes exactly one PROMPT argument")
	default:
		err = checkText("PROMPT", flags.Arg(0))
	}
	if err == nil {
		err = checkStoreFlag(flags)
	}
	if err != nil {
		return usageError(stderr, runUsage, flags, err)
	}
	agents, err := model.agents(slog.New(slog.NewTextHandler(stderr, nil)), acps.delegations())
	if err != nil {
		return failure(stderr, "run", err)
	}
	defer closeAgents(agents)
	rt, err := openRuntime(*store, dsh.Options{Logger: warnLogger(stderr), ModelAgents: agents, ACPAgents: acps.options()}, storeChoice{})
	if err != nil {
		return failure(stderr, "run", err)
	}
	end, err := runPrompt(ctx, rt, flags.Arg(0), stdout)
	if closeErr := rt.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return failure(stderr, "run", err)
	}
	if end.Reason != string(agent.Completed) {
		return failure(stderr, "run", turnFailed(end))
	}
	return 0
}

// turnFailed describes a turn that did not complete.
func turnFailed(end event.TurnEnd) error {
	text := "the turn ended " + end.Reason
	if end.Message != "" {
		text += ": " + end.Message
	}
	if end.Code != "" {
		text += " (" + end.Code + ")"
	}
	return errors.New(text)
}

// runPrompt starts the agent, sends prompt, prints the turn as it is
// logged and its children's replies, and returns how it ended once its
// children have settled.
func runPrompt(ctx context.Context, rt *dsh.Runtime, prompt string, stdout io.Writer) (event.TurnEnd, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return event.TurnEnd{}, err
	}
	id := uuid.NewString()
	p := &printer{w: stdout}
	stop := rt.Subscribe(func(n dsh.Notice) {
		if n.Kind == dsh.SessionAppended && n.SessionID == id {
			p.event(n.Event)
		}
	})
	defer stop()
	if err := rt.OpenSession(ctx, dsh.SessionSpec{ID: id, Cwd: cwd}); err != nil {
		return event.TurnEnd{}, err
	}
	p.line("[session " + id + "]") // only once the session exists
	if _, err := rt.PromptSession(ctx, id, event.Text(prompt), event.Source{Kind: event.SourceUser}); err != nil {
		return event.TurnEnd{}, err
	}
	if h, ok := rt.Agent(id); ok {
		if err := h.WhenIdle(ctx); err != nil {
			_ = rt.CancelTurn(context.WithoutCancel(ctx), id, false)
			_ = h.WhenIdle(context.Background())
		}
	}
	waitChildren(ctx, rt, id, p)
	return p.turnEnd(), nil
}

// waitChildren waits for the epoch of each continuable child of root to
// end (an epoch ends only once its own children ended) and prints how
// each ended. One listing is enough: once root's turn ended, nothing here
// starts a child of root or sends one a message. It stops early when ctx
// is done.
func waitChildren(ctx context.Context, rt *dsh.Runtime, root string, p *printer) {
	children, err := rt.Children(ctx, root)
	if err != nil {
		return
	}
	for _, child := range children {
		end, ok, err := rt.WaitChild(ctx, child.ID)
		if err != nil {
			return
		}
		if ok {
			var failure *failureText
			if end.StopReason == agent.Error {
				failure = lastTurnFailure(ctx, rt, child.ID)
			}
			p.childEnded(child.ID, end, failure)
		}
	}
}

// printer writes a turn's events as they are logged: streamed text as it
// arrives, a message that was not streamed whole, one line per tool call,
// per result and per retried model call. Its reason is the last turn's: a
// retry chain's outcome is its last turn's.
type printer struct {
	mu       sync.Mutex
	w        io.Writer
	streamed bool // this step printed text deltas
	midLine  bool
	end      event.TurnEnd
}

func (p *printer) event(e dsh.Event) {
	payload, err := e.Payload()
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch v := payload.(type) {
	case event.Delta:
		if !v.Reasoning {
			p.write(v.Text)
			p.streamed = true
		}
	case event.AssistantMessage:
		if !p.streamed {
			p.write(event.TextOf(v.Content))
		}
		p.streamed = false
		p.newline()
	case event.ToolCall:
		p.line(fmt.Sprintf("[tool %s %s]", v.Name, oneLine(v.Arguments)))
	case event.ToolResult:
		for _, r := range v.Results {
			p.line("[result] " + oneLine(event.TextOf(r.Content)))
		}
	case event.Retry:
		p.line(retryLine(v))
	case event.TurnEnd:
		p.end = v
		p.newline()
	}
}

// retryLine is the line of a retried model call: which retry, after what
// delay, and the failure that caused it.
func retryLine(r event.Retry) string {
	which := fmt.Sprintf("retry %d", r.Attempt)
	if r.MaxRetries != nil {
		which += fmt.Sprintf(" of %d", *r.MaxRetries)
	}
	why := r.Message
	if r.Code != "" {
		why += " (" + r.Code + ")"
	}
	return fmt.Sprintf("[%s in %.0f ms: %s]", which, r.DelayMs, oneLine(why))
}

func (p *printer) write(s string) {
	if s == "" {
		return
	}
	fmt.Fprint(p.w, s)
	p.midLine = !strings.HasSuffix(s, "\n")
}

func (p *printer) newline() {
	if p.midLine {
		fmt.Fprintln(p.w)
		p.midLine = false
	}
}

func (p *printer) line(s string) {
	p.newline()
	fmt.Fprintln(p.w, s)
}

// childEnded prints how a child's epoch ended, its last reply and, when
// its last turn failed (failure not nil), why.
func (p *printer) childEnded(id string, end agent.ChildEnd, failure *failureText) {
	line := fmt.Sprintf("[child %s %s]", id, end.StopReason)
	if reply := oneLine(end.LastAssistantText()); reply != "" {
		line += " " + reply
	}
	if failure != nil {
		line += " (failed: " + failure.why() + ")"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line(line)
}

// turnEnd is how the turn ended.
func (p *printer) turnEnd() event.TurnEnd {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.end
}

// oneLine cuts s to its first line and 200 bytes (fewer when byte 200
// is inside a character, which is never split), saying how much more
// there was.
func oneLine(s string) string {
	first, _, more := strings.Cut(s, "\n")
	if len(first) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(first[cut]) {
			cut--
		}
		first, more = first[:cut], true
	}
	if more {
		return first + fmt.Sprintf(" … (%d more bytes)", len(s)-len(first))
	}
	return first
}
