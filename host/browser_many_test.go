package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// plantChildren stores n continuable children of parentID (each a log
// holding its descriptor), labelled kid0000…, created in that order.
func plantChildren(t testing.TB, s *runtimeStack, parentID string, n int) {
	t.Helper()
	ctx := context.Background()
	store := s.rt.Sessions().Store()
	start := time.Now().UnixMilli()
	for i := range n {
		d, err := descriptor.Snapshot(descriptor.Data{Provider: "spawn", Label: fmt.Sprintf("kid%04d", i)})
		require.NoError(t, err)
		data, err := json.Marshal(d)
		require.NoError(t, err)
		id := fmt.Sprintf("%s-kid%04d", parentID, i)
		require.NoError(t, store.Create(ctx, session.Header{ID: id, CreatedAt: start + int64(i), ParentSession: parentID,
			Origin: "subagent", DelegationDepth: 1}, nil))
		require.NoError(t, store.Append(ctx, id, []session.Event{{Type: vocab.TypeSubagentDescriptor, Seq: 0, Time: start, Data: data}}))
	}
}

// openManyChildren opens the stored session parentID with n children,
// opens its tree and scrolls it to the end, showing every row page by
// page; it returns the longest main-thread gap meanwhile (ms).
func openManyChildren(t testing.TB, p *browserPage, s *runtimeStack, parentID string, n int) float64 {
	p.until(fmt.Sprintf(`document.querySelector('#session-list .session[data-id=%s]') !== null`, js(parentID)))
	eval[bool](p, fmt.Sprintf(`(document.querySelector('#session-list .session[data-id=%s]').click(), true)`, js(parentID)))
	p.until(fmt.Sprintf(`document.querySelector('.trigger')?.textContent === %s`, js(fmt.Sprintf("%d subagents", n))))
	eval[bool](p, watchMainThread)
	eval[bool](p, `(document.querySelector('.trigger').click(), true)`)
	showAllRows(p, n)
	return eval[float64](p, `(clearTimeout(window.__gapTimer), window.__longestGap)`)
}

// showAllRows scrolls the open tree to its end and shows its next page of
// rows until all n first-level rows are shown.
func showAllRows(p *browserPage, n int) {
	p.until(`document.querySelectorAll('[role="tree"] [role="treeitem"]').length > 0`)
	for range n {
		more := eval[bool](p, `(() => { const menu = document.querySelector('.menu'); menu.scrollTop = menu.scrollHeight;
		  const more = document.querySelector('.menu .more'); more?.click(); return !!more; })()`)
		if !more {
			break
		}
	}
	p.until(fmt.Sprintf(`document.querySelectorAll('[role="tree"] [role="treeitem"][aria-level="1"]').length === %d`, n))
}

// TestBrowserThousandChildren: a session with 1,000 children lists them in
// pages: the first page at once, "show more" for the rest, every row in
// catalog order in the end, focus on the first new row of each page.
func TestBrowserThousandChildren(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	talkAndStore(t, s.rt, "many", "reply a thousand children")
	plantChildren(t, s, "many", 1000)
	p := openPage(t, chromium)
	openFreshPage(p, s, "en")
	gap := openManyChildren(t, p, s, "many", 1000)
	labels := eval[[]string](p, `[...document.querySelectorAll('[role="tree"] [role="treeitem"][aria-level="1"] .label')].map((e) => e.textContent)`)
	for i, label := range labels {
		require.Equal(t, fmt.Sprintf("kid%04d", i), label)
	}
	t.Logf("longest main-thread gap opening and paging a 1,000-child tree: %.0f ms", gap)
	p.shot("thousand")
}

// BenchmarkBrowserThousandChildren reports the longest main-thread gap
// while the tree of 1,000 children opens and is paged to its end, against
// a 10-child tree in the same run (gap-ratio).
func BenchmarkBrowserThousandChildren(b *testing.B) {
	chromium := chromiumPath(b, exec.LookPath)
	for b.Loop() {
		gaps := map[int]float64{}
		for _, n := range []int{10, 1000} {
			s := newRuntimeStack(b)
			id := fmt.Sprintf("many%d", n)
			h, err := s.rt.StartAgent(context.Background(), parent.CreateSpec{Header: session.Header{ID: id}})
			require.NoError(b, err)
			require.NoError(b, h.Dispose(context.Background()))
			plantChildren(b, s, id, n)
			p := openPage(b, chromium)
			openFreshPage(p, s, "en")
			gaps[n] = openManyChildren(b, p, s, id, n)
			s.stop()
		}
		b.ReportMetric(gaps[1000], "longest-gap-ms")
		b.ReportMetric(gaps[10], "baseline-gap-ms")
		b.ReportMetric(gaps[1000]/gaps[10], "gap-ratio")
	}
}
