package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/session"
)

func init() {
	register("show", "print a stored session's transcript (read-only)", runShow)
}

const showUsage = "usage: dsh-actors show [--store DIR] ID"

// summaryWidth bounds the summary printed for one event, in runes.
const summaryWidth = 72

// runShow prints one session read through the session query from the
// store (Inspect: the valid stored prefix, never repaired or written): a
// header line, then one line per event with its seq, type and a summary.
func runShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("show")
	store := storeFlag(flags)
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
		fmt.Fprintf(stdout, "%5d  %-20s  %s\n", e.Seq, e.Type, summarize(e))
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

// summarize gives a short, one-line description of an event's payload.
func summarize(e session.Event) string {
	summary := payloadSummary(e)
	if e.SurfaceOp != nil && string(e.SurfaceOp) != `"append"` {
		summary += " [surface " + string(e.SurfaceOp) + "]"
	}
	return summary
}

func payloadSummary(e session.Event) string {
	switch e.Type {
	case descriptor.EventType:
		return descriptorSummary(e.Data)
	case "turn/start", "turn/end":
		return turnSummary(e.Data)
	}
	if text, ok := messageText(e.Data); ok {
		return truncate(fmt.Sprintf("%q", text))
	}
	return truncate(string(e.Data))
}

func descriptorSummary(raw json.RawMessage) string {
	d, err := descriptor.Parse(raw)
	if err != nil {
		return truncate(err.Error())
	}
	return truncate(fmt.Sprintf("provider=%s label=%q", d.Provider, d.Label))
}

// failureText is the message and code of a failed turn.
type failureText struct {
	Message string `json:"message"`
	Code    string `json:"code"`
}

// turnSummary is "turn N KIND", and for a failed turn ": MESSAGE (CODE)",
// read from any of the shapes an error reason takes: the seed-era loop's
// {kind:"error", step, message, code?} or {kind:"error", step, failure},
// and the later {kind:"error", error:{message, code}} (which this runtime
// wrote before it wrote the seed-era shape).
func turnSummary(raw json.RawMessage) string {
	var turn struct {
		Turn   int `json:"turn"`
		Reason struct {
			Kind string `json:"kind"`
			failureText
			Failure *failureText `json:"failure"`
			Error   *failureText `json:"error"`
		} `json:"reason"`
	}
	if json.Unmarshal(raw, &turn) != nil {
		return truncate(string(raw))
	}
	summary := strings.TrimSpace(fmt.Sprintf("turn %d %s", turn.Turn, turn.Reason.Kind))
	failure := turn.Reason.failureText
	for _, nested := range []*failureText{turn.Reason.Failure, turn.Reason.Error} {
		if failure.Message == "" && nested != nil {
			failure = *nested
		}
	}
	if failure.Message != "" {
		summary += ": " + failure.Message
	}
	if failure.Code != "" {
		summary += " (" + failure.Code + ")"
	}
	return truncate(summary)
}

// messageText joins the text blocks of a user message ({content}) or of a
// wrapped message ({message:{content}}).
func messageText(raw json.RawMessage) (string, bool) {
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
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
		if b.Type == "text" {
			texts = append(texts, b.Text)
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
