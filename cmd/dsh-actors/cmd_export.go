package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/fault"
)

const (
	exportUsage = "usage: dsh-actors export --store postgres://... --to DIR"
	importUsage = "usage: dsh-actors import --from DIR --store postgres://..."
)

// isPostgres reports whether a --store value names a Postgres database
// rather than a folder.
func isPostgres(store string) bool {
	return strings.HasPrefix(store, "postgres://") || strings.HasPrefix(store, "postgresql://")
}

// runExport writes every session of the Postgres store into the JSONL
// layout under --to (header and event lines verbatim, so an import of
// the result and an export give the same bytes); a log that exists
// already under --to is refused.
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("export")
	store := flags.String("store", "", "the Postgres store (postgres://...)")
	to := flags.String("to", "", "the JSONL store folder to write (created when missing)")
	if err := parseCopyFlags(flags, args, store, to, "--to"); err != nil {
		return usageError(stderr, exportUsage, flags, err)
	}
	n, err := dsh.Export(ctx, *store, *to)
	if err != nil {
		return failure(stderr, "export", copyFailure(n, err))
	}
	fmt.Fprintf(stdout, "exported %d sessions to %s\n", n, *to)
	return 0
}

// runImport copies every log of the JSONL store at --from into the
// Postgres store: a damaged log is skipped and named (the exit status is
// then 1), a log with a torn tail is copied without it and named (as
// check names it), a session stored there already is left as it is, so
// running it again copies what is missing.
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("import")
	store := flags.String("store", "", "the Postgres store (postgres://...)")
	from := flags.String("from", "", "the JSONL store folder to read")
	if err := parseCopyFlags(flags, args, store, from, "--from"); err != nil {
		return usageError(stderr, importUsage, flags, err)
	}
	if info, err := os.Stat(*from); err != nil || !info.IsDir() {
		return failure(stderr, "import", fmt.Errorf("--from %q is not a store folder (it names the JSONL store to import)", *from))
	}
	report, err := dsh.Import(ctx, *from, *store)
	if err != nil {
		return failure(stderr, "import", copyFailure(report.Imported, err))
	}
	for _, d := range report.Skipped {
		fmt.Fprintf(stderr, "dsh-actors import: skipped %s: %v\n", d.ID, d.Err)
	}
	for _, d := range report.Cut {
		fmt.Fprintf(stderr, "dsh-actors import: %s imported without its torn tail: %v\n", d.ID, d.Err)
	}
	fmt.Fprintf(stdout, "imported %d sessions from %s%s\n", report.Imported, *from, importNotes(report))
	if len(report.Skipped) > 0 {
		return 1
	}
	return 0
}

// copyFailure is a failed export or import after n sessions; a Postgres
// store that could not be opened is its own error, as it was before any.
func copyFailure(n int, err error) error {
	if errors.Is(err, fault.PersistenceUnavailable) {
		return errors.Unwrap(err)
	}
	return fmt.Errorf("after %d sessions: %w", n, err)
}

// importNotes is the parenthesis after the import's count: the sessions
// stored already and the damaged logs skipped, when there are any.
func importNotes(r dsh.ImportReport) string {
	var notes []string
	if r.Present > 0 {
		notes = append(notes, fmt.Sprintf("%d stored already", r.Present))
	}
	switch n := len(r.Skipped); {
	case n == 1:
		notes = append(notes, "1 damaged log skipped")
	case n > 1:
		notes = append(notes, fmt.Sprintf("%d damaged logs skipped", n))
	}
	switch n := len(r.Cut); {
	case n == 1:
		notes = append(notes, "1 torn tail left out")
	case n > 1:
		notes = append(notes, fmt.Sprintf("%d torn tails left out", n))
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, ", ") + ")"
}

// parseCopyFlags parses export's or import's flags (no positional
// argument) and refuses a missing folder flag or a --store that is not a
// Postgres URL.
func parseCopyFlags(flags *flag.FlagSet, args []string, store, folder *string, folderFlag string) error {
	if err := parseFlagsOnly(flags, args); err != nil {
		return err
	}
	switch {
	case !isPostgres(*store):
		return errors.New("--store must name a Postgres store (postgres://...)")
	case *folder == "":
		return fmt.Errorf("%s names the JSONL store folder and is required", folderFlag)
	}
	return nil
}
