package main

import (
	"context"
	"fmt"
	"io"

	dsh "github.com/dsh-actors/dsh-actors"
)

const searchUsage = "usage: dsh-actors search [--json] [--limit N] [--offset N] [--no-index] [--store DIR] PHRASE"

// searchDefaultLimit is --limit's default, dsh.SearchRequest.Limit's.
const searchDefaultLimit = 20

// runSearch prints the events of stored sessions whose text holds PHRASE
// as a literal phrase, best first: one line `<sessionId> <seq> <snippet>`
// per hit, or with --json an array of {sessionId, seq, type, snippet}.
// The derived index answers unless --no-index.
func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("search")
	asJSON := flags.Bool("json", false, "print the hits as a JSON array")
	limit := flags.Int("limit", searchDefaultLimit, fmt.Sprintf("hits to print (1 to %d)", dsh.SearchMaxLimit))
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
	req := dsh.SearchRequest{Phrase: positional[0], Limit: *limit, Offset: *offset}
	page, err := search(ctx, *store, req, *noIndex)
	if err != nil {
		return failure(stderr, "search", err)
	}
	if *asJSON {
		return printJSON(stdout, stderr, page.Hits)
	}
	for _, h := range page.Hits {
		fmt.Fprintf(stdout, "%s %d %s\n", h.SessionID, h.Seq, h.Snippet)
	}
	return 0
}

// search runs req through a runtime over the store: through the derived
// index of a JSONL folder unless noIndex, else by reading every log.
func search(ctx context.Context, root string, req dsh.SearchRequest, noIndex bool) (dsh.SearchPage, error) {
	rt, err := openStore(root, noIndex)
	if err != nil {
		return dsh.SearchPage{}, err
	}
	defer rt.Close()
	return rt.Search(ctx, req)
}
