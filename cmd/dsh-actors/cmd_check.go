package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/session"
)

const checkUsage = "usage: dsh-actors check [--json] [--store DIR]"

// damage is one problem as check --json prints it.
type damage struct {
	Kind    string `json:"kind"`
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	FrameAt *int64 `json:"frameAt,omitempty"`
	Message string `json:"message"`
}

// runCheck walks the store without writing anything and prints each
// problem found: one line per problem (path, line or frame, message), or
// a JSON array with --json; then each session whose durable inbox holds
// messages no turn ran yet (kind "pending", which is no problem). It
// exits 1 when it found a problem (or could not read the store), 0 for a
// healthy store.
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("check")
	asJSON := flags.Bool("json", false, "print the problems as a JSON array")
	root := storeFlag(flags)
	if err := parseFlagsOnly(flags, args); err != nil {
		return usageError(stderr, checkUsage, flags, err)
	}
	found, err := checkStore(ctx, *root)
	if err != nil {
		return failure(stderr, "check", err)
	}
	if *asJSON {
		if err := writeJSON(stdout, found, ""); err != nil {
			return failure(stderr, "check", err)
		}
	} else {
		printDamage(stdout, *root, found)
	}
	if problems(found) > 0 {
		return 1
	}
	return 0
}

// pendingKind is the kind of a report of messages waiting in a durable
// inbox: what the session runs first when it resumes, not damage.
const pendingKind = "pending"

// problems counts the reports that are damage.
func problems(found []damage) int {
	n := 0
	for _, d := range found {
		if d.Kind != pendingKind {
			n++
		}
	}
	return n
}

// checkStore runs session.Check over root, which must exist.
func checkStore(ctx context.Context, root string) ([]damage, error) {
	if err := requireStore(root); err != nil {
		return nil, err
	}
	found, err := session.Check(ctx, root)
	if err != nil {
		return nil, err
	}
	out := make([]damage, 0, len(found))
	for _, d := range found {
		e := damage{Kind: d.Kind, Path: d.Path, Line: d.Line, Message: d.Msg}
		if d.FrameAt >= 0 {
			e.FrameAt = &d.FrameAt
		}
		out = append(out, e)
	}
	pending, err := pendingMessages(ctx, root)
	return append(out, pending...), err
}

// pendingMessages reports, in listing order, each stored session whose
// durable inbox (a store in the durable admission mode) holds admitted
// messages no turn ran yet, naming them oldest first. It only reads.
func pendingMessages(ctx context.Context, root string) ([]damage, error) {
	store, err := session.OpenJSONL(root, session.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, err
	}
	defer store.Close()
	in, ok := store.DurableInbox()
	if !ok {
		return nil, nil
	}
	headers, err := store.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []damage
	for _, h := range headers {
		pending, err := in.Pending(ctx, h.ID)
		if err != nil || len(pending) == 0 {
			continue // a log that cannot be read is reported as damage already
		}
		ids := make([]string, len(pending))
		for i, p := range pending {
			ids[i] = p.MessageID
		}
		log, err := logpath.Path(root, h.Cwd, h.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, damage{Kind: pendingKind, Path: filepath.Join(filepath.Dir(log), "session.inbox"),
			Message: fmt.Sprintf("%d admitted messages not run yet (%s); they run first, in this order, when the session resumes",
				len(ids), strings.Join(ids, ", "))})
	}
	return out, nil
}

func printDamage(w io.Writer, root string, found []damage) {
	for _, d := range found {
		where := ""
		switch {
		case d.FrameAt != nil:
			where = fmt.Sprintf(" frame at byte %d", *d.FrameAt)
		case d.Line > 0:
			where = fmt.Sprintf(" line %d", d.Line)
		}
		fmt.Fprintf(w, "%s %s%s: %s\n", d.Kind, d.Path, where, d.Message)
	}
	if problems(found) == 0 {
		fmt.Fprintf(w, "store %s: no damage found\n", root)
		return
	}
	if n := problems(found); n == 1 {
		fmt.Fprintf(w, "store %s: 1 problem found\n", root)
	} else {
		fmt.Fprintf(w, "store %s: %d problems found\n", root, n)
	}
}
