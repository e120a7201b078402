package main

import (
	"context"
	"fmt"
	"io"

	dsh "github.com/dsh-actors/dsh-actors"
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

// runCheck reads the store without writing anything and prints each
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

// checkStore runs dsh.Check over root: a JSONL store folder, which must
// exist (a file there is a persistence failure, as for every command), or
// a Postgres store.
func checkStore(ctx context.Context, root string) ([]damage, error) {
	if !isPostgres(root) {
		if err := requireStore(root); err != nil {
			return nil, err
		}
		if err := checkStoreRoot(root); err != nil {
			return nil, err
		}
	}
	found, err := dsh.Check(ctx, root)
	if err != nil {
		return nil, err
	}
	out := make([]damage, len(found))
	for i, d := range found {
		out[i] = damage{Kind: d.Kind, Path: d.Path, Line: d.Line, Message: d.Message}
		if d.FrameAt >= 0 {
			out[i].FrameAt = &d.FrameAt
		}
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
