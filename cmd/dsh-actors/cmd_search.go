package main

import (
	"context"
	"fmt"
	"io"

	"github.com/dsh-actors/dsh-actors/internal/index"
)

const searchUsage = "usage: dsh-actors search [--json] [--limit N] [--offset N] [--no-index] [--store DIR] PHRASE"

// runSearch prints the events of stored sessions whose text holds PHRASE
// as a literal phrase, best first: one line `<sessionId> <seq> <snippet>`
// per hit, or with --json an array of {sessionId, seq, type, snippet}.
// The derived index answers unless --no-index.
func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("search")
	asJSON := flags.Bool("json", false, "print the hits as a JSON array")
	limit := flags.Int("limit", index.DefaultLimit, fmt.Sprintf("hits to print (1 to %d)", index.MaxLimit))
	offset := flags.Int("offset", 0, "hits to skip first")
	store := storeFlag(flags)
	noIndex := noIndexFlag(flags)
	positional, err := parseInterspersed(flags, args)
	if err := exactlyOne(positional, err, "PHRASE"); err != nil {
		return usageError(stderr, searchUsage, flags, err)
	}
	if *limit == 0 { // the request's 0 means the default; a 0 typed here is out of range
		*limit = -1
	}
	req := index.SearchRequest{Phrase: positional[0], Limit: *limit, Offset: *offset}
	page, err := search(ctx, *store, req, !*noIndex)
	if err != nil {
		return failure(stderr, "search", err)
	}
	if *asJSON {
		hits := page.Hits
		if hits == nil {
			hits = []index.Hit{}
		}
		return printJSON(stdout, stderr, hits)
	}
	for _, h := range page.Hits {
		fmt.Fprintf(stdout, "%s %d %s\n", h.SessionID, h.Seq, h.Snippet)
	}
	return 0
}

func search(ctx context.Context, root string, req index.SearchRequest, indexed bool) (index.Page, error) {
	sessions, closeStore, err := openSessions(root)
	if err != nil {
		return index.Page{}, err
	}
	defer closeStore()
	if !indexed || isPostgres(root) { // the derived index lives beside a JSONL root
		return index.ScanSearch(ctx, sessions.Store(), req)
	}
	db, err := index.Open(ctx, root, sessions)
	if err != nil {
		return index.Page{}, err
	}
	defer db.Close()
	return db.Search(ctx, req)
}
