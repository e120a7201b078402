package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
)

const listUsage = "usage: dsh-actors list [--json] [--no-index] [--store DIR] PARENT_ID"

// runList prints the catalog of one parent session, read from the store
// alone (no live sessions, nothing written): the list_agents rendering,
// or a JSON array with --json.
func runList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("list")
	asJSON := flags.Bool("json", false, "print the entries as a JSON array")
	store := storeFlag(flags)
	noIndex := noIndexFlag(flags)
	positional, err := parseInterspersed(flags, args)
	if err := exactlyOneID(positional, err, "PARENT_ID"); err != nil {
		return usageError(stderr, listUsage, flags, err)
	}
	children, err := listChildren(ctx, *store, positional[0], *noIndex)
	if err != nil {
		return failure(stderr, "list", err)
	}
	if *asJSON {
		entries := make([]any, len(children))
		for i, c := range children {
			entries[i] = catalogEntry(c)
		}
		return printJSON(stdout, stderr, entries)
	}
	fmt.Fprintln(stdout, dsh.RenderChildren(children))
	return 0
}

// listChildren lists parentID's children through a runtime over the
// store: the derived index of a JSONL folder (or the Postgres store's
// query) unless noIndex; all answer alike.
func listChildren(ctx context.Context, root, parentID string, noIndex bool) ([]agent.Child, error) {
	rt, err := openStore(root, noIndex)
	if err != nil {
		return nil, err
	}
	defer rt.Close()
	return rt.Children(ctx, parentID)
}

// catalogEntry is c as list --json prints it, in the list_agents tool's
// key order: {kind:"child", id, label, status} or {kind:"diagnostic", id,
// reason}.
func catalogEntry(c agent.Child) any {
	if c.Diagnostic != "" {
		return struct {
			Kind   string `json:"kind"`
			ID     string `json:"id"`
			Reason string `json:"reason"`
		}{"diagnostic", c.ID, c.Diagnostic}
	}
	return struct {
		Kind   string `json:"kind"`
		ID     string `json:"id"`
		Label  string `json:"label"`
		Status string `json:"status"`
	}{"child", c.ID, c.Label, c.Status}
}

// openStore opens the runtime a reading command (list, search, show)
// reads through, with nothing live in it: over the JSONL store folder
// root, which must exist, or the Postgres store of a postgres:// URL;
// noIndex reads the logs without the derived index.
func openStore(root string, noIndex bool) (*dsh.Runtime, error) {
	if !isPostgres(root) {
		if err := requireStore(root); err != nil {
			return nil, err
		}
		if err := requireFolder(root); err != nil {
			return nil, persistenceFailed("session persistence listing failed", err)
		}
	}
	rt, err := dsh.Open(dsh.Options{Dir: root, NoIndex: noIndex})
	if errors.Is(err, fault.PersistenceUnavailable) {
		return nil, persistenceFailed("session persistence listing failed", errors.Unwrap(err))
	}
	return rt, err
}

// requireFolder fails as the store does when root is not a folder.
func requireFolder(root string) error {
	info, err := os.Stat(root)
	if err != nil || info.IsDir() {
		return nil
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	return &fs.PathError{Op: "open session root", Path: abs, Err: errors.New("not a directory")}
}

func printJSON(stdout, stderr io.Writer, v any) int {
	if err := writeJSON(stdout, v, ""); err != nil {
		return failure(stderr, "list", err)
	}
	return 0
}

// writeJSON writes v and a newline as JSON.stringify(v, null, indent)
// writes it (event.Marshal, then indented): no HTML escaping, U+2028 and
// U+2029 raw, compact when indent is "". Every JSON the CLI prints goes
// through it.
func writeJSON(w io.Writer, v any, indent string) error {
	b, err := event.Marshal(v)
	if err != nil {
		return err
	}
	if indent != "" {
		var buf bytes.Buffer
		if err := json.Indent(&buf, b, "", indent); err != nil {
			return err
		}
		b = buf.Bytes()
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// parseInterspersed parses flags that may come before or after the
// positional arguments (the flag package alone stops at the first
// non-flag); "--" ends the flags. An empty --store is an error.
func parseInterspersed(flags *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := flags.Parse(args); err != nil {
			return nil, err
		}
		rest := flags.Args()
		if len(rest) == 0 {
			return positional, checkStoreFlag(flags)
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), checkStoreFlag(flags)
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// exactlyOne passes a parse error through and turns a count of positional
// arguments other than one into an error naming the expected argument.
func exactlyOne(positional []string, err error, name string) error {
	if err == nil && len(positional) != 1 {
		return fmt.Errorf("expected one %s argument, got %d", name, len(positional))
	}
	return err
}

// exactlyOneID is exactlyOne for a session id, which must not be empty
// either (the original's session ids are non-empty strings).
func exactlyOneID(positional []string, err error, name string) error {
	if err := exactlyOne(positional, err, name); err != nil {
		return err
	}
	if positional[0] == "" {
		return fmt.Errorf("%s must not be empty", name)
	}
	return nil
}

// usageError prints the problem (if any), the usage line and the flags,
// and returns the usage exit status 2, or 0 when err is the help flag's
// flag.ErrHelp (help asked for; dispatch then passes stdout as stderr).
func usageError(stderr io.Writer, usage string, flags *flag.FlagSet, err error) int {
	helped := errors.Is(err, flag.ErrHelp)
	if err != nil && !helped {
		fmt.Fprintf(stderr, "dsh-actors %s: %v\n", flags.Name(), err)
	}
	fmt.Fprintln(stderr, usage)
	flags.SetOutput(stderr)
	flags.PrintDefaults()
	if helped {
		return 0
	}
	return 2
}
