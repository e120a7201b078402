package main

import (
	"context"
	"fmt"
	"io"

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
// a JSON array with --json. It exits 1 when it found anything (or could
// not read the store), 0 for a healthy store.
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
	if len(found) > 0 {
		return 1
	}
	return 0
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
	if len(found) == 0 {
		fmt.Fprintf(w, "store %s: no damage found\n", root)
		return
	}
	fmt.Fprintf(w, "store %s: %d problems found\n", root, len(found))
}
