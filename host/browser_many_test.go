package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// plantChildren stores n continuable children of parentID (each a log
// holding its descriptor), labelled kid0000…, created in that order.
func plantChildren(t testing.TB, s *runtimeStack, parentID string, n int) {
	t.Helper()
	start := time.Now().UnixMilli()
	s.plant(t, func(store *session.JSONL) {
		for i := range n {
			d, err := descriptor.Snapshot(descriptor.Data{Provider: "spawn", Label: fmt.Sprintf("kid%04d", i)})
			require.NoError(t, err)
			data, err := json.Marshal(d)
			require.NoError(t, err)
			id := fmt.Sprintf("%s-kid%04d", parentID, i)
			plant(t, store, session.Header{ID: id, CreatedAt: start + int64(i), ParentSession: parentID, Origin: "subagent", DelegationDepth: 1},
				session.Event{Type: vocab.TypeSubagentDescriptor, Time: start, Data: data})
		}
	})
}

// openManyChildren opens the stored session parentID with n children and
// opens its tree; it returns the longest main-thread gap while the tree
// opened and was scrolled to its end (ms), how long the first rows took
// to show (ms) and the first-level labels in tree order.
func openManyChildren(t testing.TB, p *browserPage, parentID string, n int) (gap, open float64, labels []string) {
	p.until(fmt.Sprintf(`document.querySelector('#session-list .session[data-id=%s]') !== null`, js(parentID)))
	eval[bool](p, fmt.Sprintf(`(document.querySelector('#session-list .session[data-id=%s]').click(), true)`, js(parentID)))
	p.until(fmt.Sprintf(`document.querySelector('.trigger')?.textContent === %s`, js(fmt.Sprintf("%d subagents", n))))
	eval[bool](p, watchMainThread)
	open = eval[float64](p, `new Promise((resolve, reject) => { const start = performance.now();
	  document.querySelector('.trigger').click();
	  const shown = () => {
	    if (document.querySelector('[role="tree"] [role="treeitem"]')) resolve(performance.now() - start);
	    else if (performance.now() - start > 60000) reject(new Error('waiting a minute for the first tree row'));
	    else requestAnimationFrame(shown);
	  };
	  shown(); })`, chromedp.EvalAwaitPromise)
	labels = scrolledLabels(t, p, n)
	return eval[float64](p, `(clearTimeout(window.__gapTimer), window.__longestGap)`), open, labels
}

// scrolledLabels scrolls the open tree from its top to its end half a
// view at a time, one step per animation frame, and returns the labels of
// the first-level rows drawn on the way, by their place in the catalog
// (aria-posinset); every one must say the catalog holds n rows.
func scrolledLabels(t testing.TB, p *browserPage, n int) []string {
	p.until(`document.querySelectorAll('[role="tree"] [role="treeitem"]').length > 0`)
	seen := eval[map[string]string](p, fmt.Sprintf(`new Promise((resolve, reject) => {
	  const menu = document.querySelector('.menu');
	  const seen = {};
	  menu.scrollTop = 0;
	  let steps = 0;
	  const step = () => {
	    for (const row of menu.querySelectorAll('[role="treeitem"][aria-level="1"]')) {
	      if (row.getAttribute('aria-setsize') !== '%d') return reject(new Error('aria-setsize ' + row.getAttribute('aria-setsize')));
	      seen[row.getAttribute('aria-posinset')] = row.querySelector('.label').textContent;
	    }
	    if (menu.scrollTop + menu.clientHeight >= menu.scrollHeight - 1) return resolve(seen);
	    if (++steps > %d) return reject(new Error('the tree did not reach its end'));
	    menu.scrollTop += Math.max(1, menu.clientHeight / 2);
	    requestAnimationFrame(() => requestAnimationFrame(step));
	  };
	  requestAnimationFrame(step);
	})`, n, 4*n+100), chromedp.EvalAwaitPromise)
	labels := make([]string, 0, len(seen))
	for i := 1; i <= len(seen); i++ {
		label, ok := seen[strconv.Itoa(i)]
		require.True(t, ok, "row %d of %d was never drawn while scrolling", i, n)
		labels = append(labels, label)
	}
	require.Len(t, labels, n)
	return labels
}

// TestBrowserThousandChildren: a session with 1,000 children opens its
// tree with only the rows in view in the page; scrolling to the end draws
// every row once, in catalog order, each saying its place among 1,000.
// The End key reaches the last row and Home the first, drawn and focused;
// "show child sessions" lists all 1,000 in the sidebar.
func TestBrowserThousandChildren(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	talkAndStore(t, s.rt, "many", "reply a thousand children")
	plantChildren(t, s, "many", 1000)
	p := openPage(t, chromium)
	openFreshPage(p, s, "en")
	gap, open, labels := openManyChildren(t, p, "many", 1000)
	for i, label := range labels {
		require.Equal(t, fmt.Sprintf("kid%04d", i), label)
	}
	require.Less(t, eval[int](p, `document.querySelectorAll('[role="tree"] [role="treeitem"]').length`), 100,
		"only the rows in view (and a margin) are in the page")
	eval[bool](p, `(document.querySelector('[role="tree"] [role="treeitem"]').focus(), true)`)
	p.key(kb.End)
	require.Equal(t, "many-kid0999", p.focusedID())
	p.key(kb.Home)
	require.Equal(t, "many-kid0000", p.focusedID())
	t.Logf("1,000-child tree: first rows after %.0f ms; longest main-thread gap opening and scrolling it: %.0f ms", open, gap)
	p.shot("thousand")
	p.key(kb.Escape)
	p.do(chromedp.Click(chromedp.ID("show-children")))
	p.until(`document.querySelectorAll('#session-list .session.child').length === 1000`)
	sidebar := eval[[]string](p, `[...document.querySelectorAll('#session-list .session.child .title-text')].map((e) => e.textContent)`)
	slices.Sort(sidebar)
	require.Equal(t, labels, sidebar, "the sidebar lists every child by its catalog label")
}

// BenchmarkBrowserThousandChildren reports the longest main-thread gap
// while the tree of 1,000 children opens and is scrolled to its end, and
// how long its first rows took to show, against a 10-child tree in the
// same run (gap-ratio, open-ratio).
func BenchmarkBrowserThousandChildren(b *testing.B) {
	chromium := chromiumPath(b, exec.LookPath)
	for b.Loop() {
		gaps, opens := map[int]float64{}, map[int]float64{}
		for _, n := range []int{10, 1000} {
			s := newRuntimeStack(b)
			id := fmt.Sprintf("many%d", n)
			started(b, s.rt, id)
			require.NoError(b, s.rt.Release(context.Background(), id))
			plantChildren(b, s, id, n)
			p := openPage(b, chromium)
			openFreshPage(p, s, "en")
			gaps[n], opens[n], _ = openManyChildren(b, p, id, n)
			s.stop()
		}
		b.ReportMetric(gaps[1000], "longest-gap-ms")
		b.ReportMetric(gaps[10], "baseline-gap-ms")
		b.ReportMetric(gaps[1000]/gaps[10], "gap-ratio")
		b.ReportMetric(opens[1000], "open-ms")
		b.ReportMetric(opens[10], "baseline-open-ms")
		b.ReportMetric(opens[1000]/opens[10], "open-ratio")
	}
}
