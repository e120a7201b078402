package host

import (
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// catalogQueueScript drives the page's catalog store (catalogs.js) against
// a scripted subagent.list whose answers the script releases by hand: each
// answer lists the members as they were when the read was made. It
// resolves to what the store fetched and ended with.
const catalogQueueScript = `(async () => {
  const { Catalogs } = await import('/catalogs.js');
  const members = ['a'];
  const calls = [];
  const rpc = (method, payload) => {
    const entries = members.map((id) => ({ kind: 'child', id, label: id, activity: 'running' }));
    return new Promise((resolve) => calls.push(() => resolve({ ok: true, value: { parentAvailable: true, entries } })));
  };
  const answerAll = async () => {
    for (let i = 0; i < 10 && calls.length > 0; i++) {
      calls.shift()();
      await new Promise((r) => setTimeout(r, 0));
    }
  };
  let fetches = 0;
  const catalogs = new Catalogs((method, payload) => { fetches++; return rpc(method, payload); }, () => {});
  const ids = () => catalogs.get('p').entries.map((e) => e.id + ':' + e.activity);
  const out = {};

  // A member added while a fetch is in flight is fetched: one more read.
  let done = catalogs.refresh('p');
  members.push('b');
  catalogs.refresh('p', { membership: true });
  catalogs.refresh('p', { membership: true });
  await answerAll();
  await done;
  out.membership = { fetches, rows: ids(), b: catalogs.entry('p', 'b')?.label ?? null };

  // Through the debounced membership frame, the same.
  fetches = 0;
  done = catalogs.refresh('p');
  members.push('c');
  catalogs.scheduleRefresh('p');
  await new Promise((r) => setTimeout(r, 120));
  await answerAll();
  await done;
  out.debounced = { fetches: fetches, rows: ids(), c: catalogs.entry('p', 'c')?.label ?? null };

  // A plain refresh during a fetch coalesces into it: no trailing read.
  fetches = 0;
  done = catalogs.refresh('p');
  catalogs.refresh('p');
  await answerAll();
  await done;
  out.coalesced = { fetches: fetches };

  // A status flip during a fetch is replayed over its answer.
  fetches = 0;
  done = catalogs.refresh('p');
  catalogs.flipActivity('b', false);
  await answerAll();
  await done;
  out.flipped = { fetches: fetches, rows: ids() };
  return JSON.stringify(out);
})()`

// TestBrowserCatalogRefreshQueue: a membership change while subagent.list
// is in flight queues exactly one more fetch, which brings the new member
// in, and entry finds it; a plain refresh coalesces; a status flip seen
// during a fetch is not undone by its older answer.
func TestBrowserCatalogRefreshQueue(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	p := openPage(t, chromium)
	p.do(chromedp.Navigate(s.url + "/?lang=en"))
	out := eval[string](p, catalogQueueScript, chromedp.EvalAwaitPromise)
	require.JSONEq(t, `{
		"membership": {"fetches": 2, "rows": ["a:running", "b:running"], "b": "b"},
		"debounced": {"fetches": 2, "rows": ["a:running", "b:running", "c:running"], "c": "c"},
		"coalesced": {"fetches": 1},
		"flipped": {"fetches": 1, "rows": ["a:running", "b:inactive", "c:running"]}
	}`, out)
}
