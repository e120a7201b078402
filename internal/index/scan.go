package index

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dsh-actors/dsh-actors/fault"

	"golang.org/x/text/unicode/norm"

	"github.com/dsh-actors/dsh-actors/session"
)

// ScanSearch is the unindexed search: it lists the store and reads every
// stored log (Inspect) to answer req as DB.Search does, with the same
// ranking and snippets. Its tokens are runs of letters, digits and marks,
// compared folded as FTS5's unicode61 folds them (fold). A nil store holds
// no session: req is validated and the page is empty.
func ScanSearch(ctx context.Context, store session.Store, req SearchRequest) (Page, error) {
	phrase, err := normalizePhrase(req.Phrase)
	if err != nil {
		return Page{}, err
	}
	limit, err := req.limit()
	if err != nil {
		return Page{}, err
	}
	if store == nil {
		return Page{}, nil
	}
	needle := tokens(sanitize(phrase))
	headers, err := store.List(ctx)
	if err != nil {
		return Page{}, &fault.Error{Code: fault.QueryPersistenceFailed, Message: "session persistence listing failed: " + err.Error(), Cause: err}
	}
	var found []scanHit
	for _, h := range headers {
		log, err := store.Inspect(ctx, h.ID)
		switch {
		case errors.Is(err, session.ErrNotFound):
			continue // removed since the listing
		case err != nil:
			return Page{}, unreadableLog(err) // as the index
		}
		for _, e := range log.Events {
			if hit, ok := matchEvent(h.ID, e, needle); ok {
				found = append(found, hit)
			}
		}
	}
	slices.SortFunc(found, func(a, b scanHit) int {
		return cmp.Or(cmp.Compare(b.matches, a.matches), cmp.Compare(a.length, b.length),
			cmp.Compare(b.time, a.time), strings.Compare(a.hit.SessionID, b.hit.SessionID), cmp.Compare(b.hit.Seq, a.hit.Seq))
	})
	var page Page
	for i := req.Offset; i < len(found) && len(page.Hits) <= limit; i++ {
		page.Hits = append(page.Hits, found[i].hit)
	}
	if len(page.Hits) > limit {
		page.Hits, page.More = page.Hits[:limit], true
	}
	return page, nil
}

type scanHit struct {
	hit     Hit
	matches int
	length  int
	time    int64
}

type token struct {
	text       string
	start, end int // byte offsets
}

// tokens splits s into case-folded runs of letters, digits and marks.
func tokens(s string) []token {
	var out []token
	start := -1
	for i, r := range s {
		inToken := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.IsMark(r) || unicode.Is(unicode.Co, r)
		switch {
		case inToken && start < 0:
			start = i
		case !inToken && start >= 0:
			out = append(out, token{fold(s[start:i]), start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, token{fold(s[start:]), start, len(s)})
	}
	return out
}

// fold is a token as unicode61 compares it: lower-cased, Latin letters
// without their diacritics (é, Å, İ fold to e, a, i), and combining
// diacritical marks (U+0300 to U+036F) dropped wherever they stand.
func fold(tok string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(tok) {
		if latin(r) {
			for _, d := range norm.NFD.String(string(r)) {
				if !combiningDiacritic(d) {
					b.WriteRune(d)
				}
			}
		} else if !combiningDiacritic(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// latin reports whether r is in the Latin blocks whose diacritics
// unicode61 removes (Latin-1 to Latin Extended-B, Latin Extended
// Additional).
func latin(r rune) bool { return r < 0x250 || (r >= 0x1E00 && r <= 0x1EFF) }

func combiningDiacritic(r rune) bool { return r >= 0x300 && r <= 0x36F }

// matchEvent finds the phrase's instances in the event's text and
// highlights them as FTS5's highlight() does.
func matchEvent(id string, e session.Event, needle []token) (scanHit, bool) {
	text := searchText(e)
	if text == "" || len(needle) == 0 {
		return scanHit{}, false
	}
	hay := tokens(text)
	var b strings.Builder
	last, matches := 0, 0
	for i := 0; i+len(needle) <= len(hay); i++ {
		if !samePhrase(hay[i:i+len(needle)], needle) {
			continue
		}
		from, to := hay[i].start, hay[i+len(needle)-1].end
		b.WriteString(text[last:from])
		b.WriteRune(markOpen)
		b.WriteString(text[from:to])
		b.WriteRune(markClose)
		last, matches = to, matches+1
		i += len(needle) - 1
	}
	if matches == 0 {
		return scanHit{}, false
	}
	b.WriteString(text[last:])
	return scanHit{
		hit:     Hit{SessionID: id, Seq: e.Seq, Type: e.Type, Snippet: snippet(b.String())},
		matches: matches, length: utf8.RuneCountInString(text), time: e.Time,
	}, true
}

func samePhrase(a, b []token) bool {
	for i := range a {
		if a[i].text != b[i].text {
			return false
		}
	}
	return true
}
