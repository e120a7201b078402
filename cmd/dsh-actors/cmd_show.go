package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
)

const showUsage = "usage: dsh-actors show [--full] [--no-index] [--store DIR] ID"

// summaryWidth bounds the summary printed for one event, in runes, unless
// --full.
const summaryWidth = 72

// summaryColumn is where an event line's summary starts ("%5d  %-20s  ").
const summaryColumn = 5 + 2 + 20 + 2

// runShow prints one session read from the store (the valid stored
// prefix, never repaired or written): a header line, then one line per
// event with its seq, type and a summary cut to summaryWidth; with --full
// nothing is cut and a message's text is printed as written, its later
// lines indented to the summary's column.
func runShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("show")
	full := flags.Bool("full", false, "print whole messages and payloads instead of one cut line each")
	store := storeFlag(flags)
	// show locates its one log as the store does (a look in each project
	// folder); the index would only add a walk of every log, so it is never
	// opened and --no-index, taken by every reading command, changes nothing.
	flags.Bool("no-index", false, "accepted as by list and search; show reads its one log directly and never opens the derived index")
	positional, err := parseInterspersed(flags, args)
	if err := exactlyOneID(positional, err, "ID"); err != nil {
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

// readSession reads the session id through a runtime over the store.
func readSession(ctx context.Context, root, id string) (dsh.History, error) {
	rt, err := openStore(root, true)
	if err != nil {
		return dsh.History{}, err
	}
	defer rt.Close()
	return rt.History(ctx, id)
}

// describeHeader renders the header's fields on one line, absent ones
// left out.
func describeHeader(h dsh.Header) string {
	created := time.UnixMilli(h.CreatedAt).UTC().Format("2006-01-02T15:04:05.000Z")
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

// summarize describes an event's payload: on one cut line, its text
// quoted, or whole.
func summarize(e dsh.Event, full bool) string {
	summary, text := e.Summary()
	switch {
	case full:
		summary = strings.ReplaceAll(summary, "\n", "\n"+strings.Repeat(" ", summaryColumn))
	case text:
		summary = truncate(fmt.Sprintf("%q", summary))
	default:
		summary = truncate(summary)
	}
	if e.SurfaceOp != nil && string(e.SurfaceOp) != `"append"` {
		summary += " [surface " + string(e.SurfaceOp) + "]"
	}
	return summary
}

func truncate(s string) string {
	runes := []rune(s)
	if len(runes) <= summaryWidth {
		return s
	}
	return string(runes[:summaryWidth-1]) + "…"
}
