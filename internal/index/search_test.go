package index

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/session"
)

func userText(seq int64, text string) session.Event {
	data, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": text}},
		"source":  map[string]string{"kind": "user"}, "role": "user", "id": "m" + string(rune('a'+seq)),
	})
	return session.Event{Type: "user/message", Seq: seq, Time: 1000 + seq, Data: data, SurfaceOp: json.RawMessage(`"append"`)}
}

func searchWorld(t testing.TB, logs ...session.Log) *DB {
	root := t.TempDir()
	require.NoError(t, storetest.WriteSynthetic(root, logs...))
	jsonl, err := session.OpenJSONL(root)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, jsonl.Close()) })
	db, err := Open(context.Background(), root, session.NewSessions(jsonl))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return db
}

func hitKeys(page Page) []string {
	var out []string
	for _, h := range page.Hits {
		out = append(out, h.SessionID+"/"+string(rune('0'+h.Seq)))
	}
	return out
}

func TestSearchMatchesLiteralPhrasesAndRanks(t *testing.T) {
	db := searchWorld(t,
		session.Log{Header: session.Header{ID: "a", CreatedAt: 1}, Events: []session.Event{
			userText(0, "the quick brown fox"), userText(1, "brown fox, brown fox again"),
		}},
		session.Log{Header: session.Header{ID: "b", CreatedAt: 2}, Events: []session.Event{
			userText(0, `NOT "brown" OR fox* col:x`), userText(1, "a BRAID of AI text"),
		}},
	)
	ctx := context.Background()
	page, err := db.Search(ctx, SearchRequest{Phrase: "  Brown \t fox "})
	require.NoError(t, err)
	require.Equal(t, []string{"a/1", "a/0"}, hitKeys(page), "two matches rank first")
	require.Equal(t, "brown fox, brown fox again", page.Hits[0].Snippet)
	require.Equal(t, "user/message", page.Hits[0].Type)

	for _, syntax := range []string{`NOT "brown" OR fox*`, `col:x`, `"`, `(`, `^x`, `*`} {
		page, err := db.Search(ctx, SearchRequest{Phrase: syntax})
		require.NoError(t, err, "FTS syntax is literal text: %q", syntax)
		for _, h := range page.Hits {
			require.Equal(t, "b", h.SessionID)
		}
	}
	page, err = db.Search(ctx, SearchRequest{Phrase: `NOT "brown" OR fox`})
	require.NoError(t, err)
	require.Equal(t, []string{"b/0"}, hitKeys(page))

	page, err = db.Search(ctx, SearchRequest{Phrase: "AI"})
	require.NoError(t, err)
	require.Equal(t, []string{"b/1"}, hitKeys(page), "tokens, not substrings: AI is not in BRAID")

	page, err = db.Search(ctx, SearchRequest{Phrase: "brown", Limit: 1})
	require.NoError(t, err)
	require.True(t, page.More)
	next, err := db.Search(ctx, SearchRequest{Phrase: "brown", Limit: 1, Offset: 1})
	require.NoError(t, err)
	require.NotEqual(t, hitKeys(page), hitKeys(next))

	for _, bad := range []string{"", "   ", "a\x00b"} {
		_, err := db.Search(ctx, SearchRequest{Phrase: bad})
		require.ErrorIs(t, err, fault.QueryInvalidQuery)
	}
	_, err = db.Search(ctx, SearchRequest{Phrase: "x", Limit: 101})
	require.ErrorIs(t, err, fault.QueryInvalidLimit)
}

func TestSearchAndTitlesFollowChangedLogs(t *testing.T) {
	db := searchWorld(t, session.Log{Header: session.Header{ID: "a", CreatedAt: 1}, Events: []session.Event{userText(0, "first words\nmore")}})
	ctx := context.Background()
	titles, err := db.Titles(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]Title{"a": {Text: "first words", AsOfSeq: 0}}, titles)
	live, err := db.sessions.Resume(ctx, "a")
	require.NoError(t, err)
	_, err = live.Append("user/message", json.RawMessage(`{"content":[{"type":"text","text":"later zebra"}],"source":{"kind":"user"},"role":"user","id":"z"}`), session.Surface())
	require.NoError(t, err)
	_, err = db.sessions.Flush(ctx, live)
	require.NoError(t, err)
	require.NoError(t, db.sessions.Release(ctx, live))
	page, err := db.Search(ctx, SearchRequest{Phrase: "zebra"})
	require.NoError(t, err)
	require.Len(t, page.Hits, 1)
	require.Equal(t, "later zebra", page.Hits[0].Snippet)
	titles, err = db.Titles(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]Title{"a": {Text: "first words", AsOfSeq: 2}}, titles, "the first user message still titles it, as of the new message (after the resume's end-seed)")
}

func TestSnippetsAreBoundedInCodePoints(t *testing.T) {
	long := ""
	for range 200 {
		long += "éé "
	}
	s := snippet(long + string(markOpen) + "hit" + string(markClose) + " " + long)
	require.LessOrEqual(t, len([]rune(s)), snippetRunes)
	require.Contains(t, s, "hit")
	require.Equal(t, "short", snippet("short"))
}

// testdata/snippets.json holds highlighted texts (markers U+FDD0/U+FDD1
// around each match) and the snippets the original's search makes of them
// at 240 code points: a text that fits is whole, the window opens 80 code
// points before the first match and widens backwards when it reaches the
// end, the cut keeps the characters at its edges (spaces too), and white
// space is JavaScript's (U+FEFF is, U+0085 is not).
func TestSnippetsAreTheOriginals(t *testing.T) {
	raw, err := os.ReadFile("testdata/snippets.json")
	require.NoError(t, err)
	var cases map[string]struct{ Highlighted, Want string }
	require.NoError(t, json.Unmarshal(raw, &cases))
	require.NotEmpty(t, cases)
	for name, c := range cases {
		require.Equal(t, c.Want, snippet(c.Highlighted), name)
	}
}

func FuzzSearchPhrase(f *testing.F) {
	for _, seed := range []string{`a "b" c`, `NOT x`, `x*`, `col:y`, `""""`, "\uFDD0x", " \t\n", "NEAR(a b, 2)", "\xff"} {
		f.Add(seed)
	}
	db := searchWorld(f, session.Log{Header: session.Header{ID: "a", CreatedAt: 1}, Events: []session.Event{userText(0, `x "b" NOT col:y`)}})
	f.Fuzz(func(t *testing.T, phrase string) {
		normalized, err := normalizePhrase(phrase)
		if err != nil {
			require.ErrorIs(t, err, fault.QueryInvalidQuery)
			return
		}
		require.Equal(t, normalized, NormalizeAgain(normalized))
		_, err = db.Search(context.Background(), SearchRequest{Phrase: phrase})
		require.NoError(t, err, "any phrase is literal text to FTS5: %q", phrase)
	})
}

// NormalizeAgain is normalizePhrase on an already normalized phrase.
func NormalizeAgain(p string) string {
	n, _ := normalizePhrase(p)
	return n
}

func TestTheUnindexedSearchAnswersAlike(t *testing.T) {
	db := searchWorld(t,
		session.Log{Header: session.Header{ID: "a", CreatedAt: 1}, Events: []session.Event{
			userText(0, "the quick brown fox"), userText(1, "brown fox, brown fox again"), userText(2, "Fox brown"),
		}},
		session.Log{Header: session.Header{ID: "b", CreatedAt: 2}, Events: []session.Event{
			userText(0, `NOT "brown" OR fox* col:x`), userText(1, "a BRAID of AI text"),
		}},
	)
	for _, phrase := range []string{"brown fox", "FOX", "ai", `"brown" or`, "nothing here", "brown"} {
		for _, limit := range []int{1, 20} {
			req := SearchRequest{Phrase: phrase, Limit: limit}
			want, err := ScanSearch(context.Background(), db.sessions.Store(), req)
			require.NoError(t, err)
			got, err := db.Search(context.Background(), req)
			require.NoError(t, err)
			require.Equal(t, want, got, "%q limit %d", phrase, limit)
		}
	}
}

// testdata/search-text.json holds events and the text the original's
// search indexes for each: a turn's failure as "error", its message and
// code; the kind of an aborted, disposed, max-tokens or interrupted turn
// (nothing for other kinds); a failed tool's error name and code after
// its result; each todo's status and content.
func TestSearchTextIsTheOriginals(t *testing.T) {
	raw, err := os.ReadFile("testdata/search-text.json")
	require.NoError(t, err)
	var cases map[string]struct {
		Event session.Event
		Want  string
	}
	require.NoError(t, json.Unmarshal(raw, &cases))
	require.NotEmpty(t, cases)
	for name, c := range cases {
		require.Equal(t, c.Want, searchText(c.Event), name)
	}
}

// FTS5's unicode61 folds Latin diacritics (precomposed or combining) and
// case; the unindexed scan must match the same events.
func TestTheUnindexedSearchFoldsDiacriticsAsTheIndex(t *testing.T) {
	db := searchWorld(t, session.Log{Header: session.Header{ID: "a", CreatedAt: 1}, Events: []session.Event{
		userText(0, "Café crème brûlée, naïve résumé"), userText(1, "ÅNGSTRÖM and ångström"),
		userText(2, "cafe\u0301 with a combining accent"), userText(3, "İstanbul, straße, Œuvre"),
	}})
	for _, phrase := range []string{"cafe", "CAFÉ", "creme brulee", "angstrom", "ÅNGSTRÖM", "istanbul", "strasse", "straße", "œuvre", "resume"} {
		req := SearchRequest{Phrase: phrase}
		want, err := db.Search(context.Background(), req)
		require.NoError(t, err)
		got, err := ScanSearch(context.Background(), db.sessions.Store(), req)
		require.NoError(t, err)
		require.Equal(t, want, got, "%q", phrase)
	}
}
