package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/internal/jsjson"
	"github.com/dsh-actors/dsh-actors/internal/pgstore"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
)

const listUsage = "usage: dsh-actors list [--json] [--no-index] [--store DIR] PARENT_ID"

// runList prints ListChildren's entries for one parent session, read from
// the store alone (no live sessions, nothing written): the list_agents
// rendering, or a JSON array with --json.
func runList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("list")
	asJSON := flags.Bool("json", false, "print the entries as a JSON array")
	store := storeFlag(flags)
	noIndex := noIndexFlag(flags)
	positional, err := parseInterspersed(flags, args)
	if err := exactlyOne(positional, err, "PARENT_ID"); err != nil {
		return usageError(stderr, listUsage, flags, err)
	}
	entries, err := listChildren(ctx, *store, positional[0], !*noIndex)
	if err != nil {
		return failure(stderr, "list", err)
	}
	if *asJSON {
		return printJSON(stdout, stderr, entries)
	}
	fmt.Fprintln(stdout, query.RenderListAgents(entries))
	return 0
}

// listChildren lists through the derived index (indexed; on a Postgres
// store, the store's own query) or the unindexed catalog reader; all
// answer alike.
func listChildren(ctx context.Context, root, parentID string, indexed bool) ([]query.Entry, error) {
	sessions, closeStore, err := openSessions(root)
	if err != nil {
		return nil, err
	}
	defer closeStore()
	if catalog, ok := sessions.Store().(query.Catalog); ok && indexed { // a Postgres store: one query
		return catalog.ListChildren(ctx, parentID)
	}
	if !indexed || isPostgres(root) { // the derived index lives beside a JSONL root
		return query.ListChildren(ctx, query.New(sessions), parentID)
	}
	db, err := index.Open(ctx, root, sessions)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.ListChildren(ctx, parentID)
}

// openSessions opens the store --store names under an empty live
// registry: a Postgres store for a postgres:// URL, else the JSONL store
// at root, which must exist.
func openSessions(root string) (*session.Sessions, func(), error) {
	if isPostgres(root) {
		store, err := pgstore.Open(context.Background(), root)
		if err != nil {
			return nil, nil, persistenceFailed("session persistence listing failed", err)
		}
		return session.NewSessions(store), func() { _ = store.Close() }, nil
	}
	if err := requireStore(root); err != nil {
		return nil, nil, err
	}
	store, err := session.OpenJSONL(root)
	if err != nil {
		return nil, nil, persistenceFailed("session persistence listing failed", err)
	}
	return session.NewSessions(store), func() { _ = store.Close() }, nil
}

// openQuery opens the JSONL store at root, which must exist, under an empty
// live registry.
func openQuery(root string) (*query.Query, func(), error) {
	sessions, closeStore, err := openSessions(root)
	if err != nil {
		return nil, nil, err
	}
	return query.New(sessions), closeStore, nil
}

func printJSON(stdout, stderr io.Writer, v any) int {
	if err := writeJSON(stdout, v, ""); err != nil {
		return failure(stderr, "list", err)
	}
	return 0
}

// writeJSON writes v and a newline as JSON.stringify(v, null, indent)
// writes it: no HTML escaping, U+2028 and U+2029 raw, compact when indent
// is "". Every JSON the CLI prints goes through it.
func writeJSON(w io.Writer, v any, indent string) error {
	out, err := jsjson.Marshal(v)
	if err != nil {
		return err
	}
	if indent != "" {
		var buf bytes.Buffer
		if err := json.Indent(&buf, out, "", indent); err != nil {
			return err
		}
		out = buf.Bytes()
	}
	_, err = w.Write(append(out, '\n'))
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
