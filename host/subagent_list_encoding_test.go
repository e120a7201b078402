package host

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// genericCatalog is subagent.list's value as writeResponse's generic path
// encodes it.
type genericCatalog struct {
	Entries         []any `json:"entries"`
	ParentAvailable bool  `json:"parentAvailable"`
}

// genericListBody is the response body the generic encoder writes for
// entries, the oracle of the spliced one.
func genericListBody(t *testing.T, rpcID string, entries []catalogEntry, live bool) string {
	t.Helper()
	rows := make([]any, len(entries))
	for i, e := range entries {
		rows[i] = toWireEntry(e)
	}
	rec := httptest.NewRecorder()
	writeResponse(rec, rpcID, genericCatalog{Entries: rows, ParentAvailable: live}, nil)
	return rec.Body.String()
}

func listBody(t *testing.T, h *Handler, rpcID, parent string) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"type": "client-request", "rpcId": rpcID, "method": "subagent.list",
		"payload": map[string]any{"parentSessionId": parent}})
	require.NoError(t, err)
	rec := post(h, "subagent.list", "application/json", string(body))
	require.Equal(t, 200, rec.Code)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	return rec.Body.String()
}

// TestSubagentListSplicedBytesEqualTheGenericEncoding: the answer spliced
// around the shared rows is byte for byte what the generic encoder writes,
// for labels and rpcIds JSON.stringify escapes in its own way (no HTML
// escaping, raw U+2028/U+2029), diagnostics, an empty catalog, and both
// parent availabilities.
func TestSubagentListSplicedBytesEqualTheGenericEncoding(t *testing.T) {
	b := newFakeBackend()
	b.catalogs["p1"] = []catalogEntry{
		{Kind: kindChild, ID: "a", Label: "<b>&\"quoted\"\u2028line\u2029\\tab\t"},
		{Kind: kindChild, ID: "b", Label: "", Running: true},
		{Kind: kindDiagnostic, ID: "c", Reason: "corrupt"},
		{Kind: kindChild, ID: "d", Label: "ünïcode 🙂"},
	}
	b.catalogs["empty"] = []catalogEntry{}
	h := newTestHandler(t, b)
	for _, rpcID := range []string{"r1", "<&>\u2028\"id\"", ""} {
		for _, live := range []bool{false, true} {
			b.live["p1"], b.live["empty"] = live, live
			for _, parent := range []string{"p1", "empty"} {
				require.Equal(t, genericListBody(t, rpcID, b.catalogs[parent], live), listBody(t, h, rpcID, parent),
					"rpcId %q, parent %s, live %v", rpcID, parent, live)
			}
		}
	}
}

// TestSubagentListAnswersTheCatalogOfEachReadWhenRowsAreReused: the rows of
// an earlier read are reused only for an equal catalog; a catalog changed
// in place by the backend, a new child, a changed activity and a removed
// child are each answered as read.
func TestSubagentListAnswersTheCatalogOfEachReadWhenRowsAreReused(t *testing.T) {
	b := newFakeBackend()
	entries := []catalogEntry{{Kind: kindChild, ID: "a", Label: "first"}, {Kind: kindChild, ID: "b", Label: "second"}}
	b.catalogs["p1"] = entries
	h := newTestHandler(t, b)
	steps := []func(){
		func() {},
		func() {},                               // unchanged: the rows are reused
		func() { entries[0].Label = "renamed" }, // the same slice, changed in place
		func() { b.catalogs["p1"] = append(b.catalogs["p1"], catalogEntry{Kind: kindChild, ID: "c"}) },
		func() { b.catalogs["p1"][1].Running = true },
		func() { b.catalogs["p1"] = b.catalogs["p1"][1:] },
		func() { b.catalogs["p1"] = []catalogEntry{{Kind: kindDiagnostic, ID: "a", Reason: "unsupported"}} },
	}
	for i, change := range steps {
		b.mu.Lock()
		change()
		b.mu.Unlock()
		require.Equal(t, genericListBody(t, "r", b.catalogs["p1"], false), listBody(t, h, "r", "p1"), "step %d", i)
	}
}

// TestCatalogReadsKeepBoundedRows: rows are kept for at most
// encodedParents parents, the latest one always among them.
func TestCatalogReadsKeepBoundedRows(t *testing.T) {
	b := newFakeBackend()
	h := newTestHandler(t, b)
	for i := range 3 * encodedParents {
		parent := fmt.Sprintf("p%03d", i)
		b.mu.Lock()
		b.catalogs[parent] = []catalogEntry{{Kind: kindChild, ID: "child-of-" + parent}}
		b.mu.Unlock()
		require.True(t, strings.Contains(listBody(t, h, "r", parent), "child-of-"+parent))
		h.catalog.mu.Lock()
		kept, latest := len(h.catalog.encoded), h.catalog.encoded[parent].rows
		h.catalog.mu.Unlock()
		require.LessOrEqual(t, kept, encodedParents)
		require.Contains(t, string(latest), "child-of-"+parent)
	}
}
