package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

const showUsage = "usage: dsh-actors show [--full] [--no-index] [--store DIR] ID"

// summaryWidth bounds the summary printed for one event, in runes, unless
// --full.
const summaryWidth = 72

// summaryColumn is where an event line's summary starts ("%5d  %-20s  ").
const summaryColumn = 5 + 2 + 20 + 2

// runShow prints one session read through the session query from the
// store (Inspect: the valid stored prefix, never repaired or written): a
// header line, then one line per event with its seq, type and a summary cut
// to summaryWidth; with --full nothing is cut and a message's text is
// printed as written, its later lines indented to the summary's column.
func runShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("show")
	full := flags.Bool("full", false, "print whole messages and payloads instead of one cut line each")
	store := storeFlag(flags)
	// show locates its one log as the store does (a look in each project
	// folder); the index would only add a walk of every log, so it is never
	// opened and --no-index, taken by every reading command, changes nothing.
	flags.Bool("no-index", false, "accepted as by list and search; show reads its one log directly and never opens the derived index")
	positional, err := parseInterspersed(flags, args)
	if err := exactlyOne(positional, err, "ID"); err != nil {
		return usageError(stderr, showUsage, flags, err)
	}
	log, err := readSession(ctx, *store, positional[0])
	if err != nil {
		return failure(stderr, "show", err)
	}
	fmt.Fprintln(stdout, describeHeader(log.Header))
	for _, e := range log.Events {
		fmt.Fprintf(stdout, "%5d  %-20s  %s\n", e.Seq, e.Type, summarize(e, *full))
	}
	return 0
}

func readSession(ctx context.Context, root, id string) (*session.Log, error) {
	q, closeStore, err := openQuery(root)
	if err != nil {
		return nil, err
	}
	defer closeStore()
	return q.ReadSession(ctx, id)
}

// describeHeader renders the header's fields on one line, absent ones
// left out.
func describeHeader(h session.Header) string {
	created := time.UnixMilli(h.CreatedAt).UTC().Format(time.RFC3339Nano)
	parts := []string{"session " + h.ID, "createdAt=" + created}
	optional := []struct{ key, value string }{
		{"parent", h.ParentSession}, {"cwd", h.Cwd}, {"origin", h.Origin}, {"agentPreset", h.AgentPreset},
	}
	for _, field := range optional {
		if field.value != "" {
			parts = append(parts, field.key+"="+field.value)
		}
	}
	if h.SeedLength != nil {
		parts = append(parts, fmt.Sprintf("seedLength=%d", *h.SeedLength))
	}
	parts = append(parts, fmt.Sprintf("depth=%d", h.DelegationDepth))
	return strings.Join(parts, " ")
}

// summarize describes an event's payload: on one cut line, or whole.
func summarize(e session.Event, full bool) string {
	summary := payloadSummary(e, full)
	if full {
		summary = strings.ReplaceAll(summary, "\n", "\n"+strings.Repeat(" ", summaryColumn))
	} else {
		summary = truncate(summary)
	}
	if e.SurfaceOp != nil && string(e.SurfaceOp) != `"append"` {
		summary += " [surface " + string(e.SurfaceOp) + "]"
	}
	return summary
}

// payloadSummary is the uncut description of e's payload; a message's text
// is quoted unless full.
func payloadSummary(e session.Event, full bool) string {
	switch e.Type {
	case vocab.TypeSubagentDescriptor:
		return descriptorSummary(e.Data)
	case vocab.TypeTurnStart, vocab.TypeTurnEnd:
		return turnSummary(e)
	case vocab.TypeToolCall:
		if call, err := vocab.DecodeAs[vocab.ToolCall](e.Type, e.Data); err == nil {
			return call.Name + " " + call.Arguments
		}
	case vocab.TypeToolResult:
		if text, ok := toolResultText(e); ok && full {
			return text
		} else if ok {
			return fmt.Sprintf("%q", text)
		}
	}
	if text, ok := messageText(e.Data); ok && full {
		return text
	} else if ok {
		return fmt.Sprintf("%q", text)
	}
	return string(e.Data)
}

func descriptorSummary(raw json.RawMessage) string {
	d, err := descriptor.Parse(raw)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("provider=%s label=%q", d.Provider, d.Label)
}

// failureText is the message and code of a failed turn.
type failureText struct {
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
}

// failureOf is a failed turn's message and code, whichever reason shape
// holds them.
func failureOf(r vocab.Reason) failureText {
	return failureText{Message: r.Text(), Code: r.ErrorCode()}
}

// turnSummary is "turn N" for a turn/start ("turn N (retry)" for a retry
// turn's), "turn N KIND" for a turn/end,
// and for a failed turn ": MESSAGE (CODE)".
func turnSummary(e session.Event) string {
	p, err := vocab.Decode(e.Type, e.Data)
	if err != nil {
		return string(e.Data)
	}
	end, isEnd := p.(vocab.TurnEnd)
	if !isEnd {
		start := p.(vocab.TurnStart)
		if start.Trigger != nil && start.Trigger.Kind == vocab.TriggerRetry {
			return fmt.Sprintf("turn %d (retry)", start.Turn)
		}
		return fmt.Sprintf("turn %d", start.Turn)
	}
	summary := fmt.Sprintf("turn %d %s", end.Turn, end.Reason.Kind)
	failure := failureOf(end.Reason)
	if failure.Message != "" {
		summary += ": " + failure.Message
	}
	if failure.Code != "" {
		summary += " (" + failure.Code + ")"
	}
	return summary
}

// toolResultText is the text of a tool result's content, marked when the
// result is an error.
func toolResultText(e session.Event) (string, bool) {
	r, err := vocab.DecodeAs[vocab.ToolResult](e.Type, e.Data)
	if err != nil || len(r.Message.Content) != 1 {
		return "", false
	}
	block := r.Message.Content[0]
	text := event.TextOf(block.Content)
	if block.IsError {
		text = "error: " + text
	}
	return text, true
}

// messageText joins the text blocks (and a tool call as "[tool-call NAME
// ARGUMENTS]") of a user message ({content}) or of a wrapped message
// ({message:{content}}).
func messageText(raw json.RawMessage) (string, bool) {
	type block struct {
		Type      string `json:"type"`
		Text      string `json:"text"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	var payload struct {
		Content []block `json:"content"`
		Message struct {
			Content []block `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(raw, &payload) != nil {
		return "", false
	}
	var texts []string
	for _, b := range append(payload.Content, payload.Message.Content...) {
		switch b.Type {
		case event.BlockText:
			texts = append(texts, b.Text)
		case event.BlockToolCall:
			texts = append(texts, "[tool-call "+b.Name+" "+b.Arguments+"]")
		}
	}
	return strings.Join(texts, " "), len(texts) > 0
}

func truncate(s string) string {
	runes := []rune(s)
	if len(runes) <= summaryWidth {
		return s
	}
	return string(runes[:summaryWidth-1]) + "…"
}
