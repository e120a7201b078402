package host

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"
)

// TestBrowserSearchOpensAHit writes two conversations through one serving
// stack, restarts it over the same store with the derived index and drives
// the page: the stored sessions show their real titles, a phrase typed in
// the search box lists its hits (FTS syntax is text), the keyboard reaches
// a hit and opens its conversation paged back to the hit's event, marked
// and in view, and Escape brings the session list back.
func TestBrowserSearchOpensAHit(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	root := t.TempDir()
	first := newRuntimeStackOn(t, root, true, "")
	var script strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&script, "reply line %d\n", i)
	}
	talk(t, first, "long", "reply the needle is here", script.String())
	talk(t, first, "other", "reply 另一个会话 haystack")
	first.stop()

	s := newRuntimeStackOn(t, root, true, "")
	p := openPage(t, chromium)
	p.do(chromedp.Navigate(s.url + "/?lang=zh"))
	p.until(`document.querySelector('#connection').dataset.state === 'connected'`)
	p.until(`[...document.querySelectorAll('#session-list .session-title')].map((e) => e.textContent).sort().join('|') === ` +
		js("reply the needle is here|reply 另一个会话 haystack"))
	require.Equal(t, "搜索会话", eval[string](p, `document.querySelector('#search-input').getAttribute('aria-label')`))
	p.shot("stored-titles")

	p.do(chromedp.SendKeys(chromedp.ID("search-input"), "NEEDLE  is"))
	p.until(`document.querySelector('#search-form').dataset.state === 'idle' && document.querySelector('#search-status').textContent === '找到 2 条结果'`)
	require.True(t, eval[bool](p, `document.querySelector('#session-list').hidden`), "hits replace the session list")
	require.Equal(t, []string{"the needle is here", "reply the needle is here"},
		eval[[]string](p, `[...document.querySelectorAll('.hit-snippet')].map((e) => e.textContent)`), "the shorter text ranks first")
	require.Equal(t, []string{"needle is", "needle is"}, eval[[]string](p, `[...document.querySelectorAll('.hit mark')].map((e) => e.textContent)`))
	require.Equal(t, []string{"智能体", "你"}, eval[[]string](p, `[...document.querySelectorAll('.hit-meta')].map((e) => e.textContent)`))
	require.Equal(t, "reply the needle is here", eval[string](p, `document.querySelector('.hit-title').textContent`))
	require.Positive(t, s.recorder.count("session.search", map[string]any{"query": "NEEDLE is", "limit": 20.0, "offset": 0.0}))
	p.shot("hits")

	p.key(kb.ArrowDown)
	require.Equal(t, "long", p.focusedID())
	p.key(kb.ArrowDown)
	p.key(kb.ArrowUp)
	hitSeq := eval[int](p, `Number(document.activeElement.dataset.seq)`)
	p.key(kb.Enter)
	p.until(`document.querySelector('.message.found') !== null`)
	require.Equal(t, "the needle is here", eval[string](p, `document.querySelector('.message.found .body').textContent`))
	require.Equal(t, hitSeq, eval[int](p, `Number(document.querySelector('.message.found').dataset.seq)`))
	require.Equal(t, "reply the needle is here", eval[string](p, `document.querySelector('#conversation-title').textContent`))
	tail := s.recorder.count("session.history", map[string]any{"sessionId": "long", "beforeSeq": nil})
	require.Equal(t, 1, tail)
	require.Greater(t, s.recorder.count("session.history", map[string]any{"sessionId": "long", "maxMessages": 50.0}), tail,
		"the hit lies before the tail page: older pages were loaded")
	require.True(t, eval[bool](p, `(() => { const r = document.querySelector('.message.found').getBoundingClientRect(), v = document.querySelector('#transcript').getBoundingClientRect(); return r.top >= v.top && r.bottom <= v.bottom; })()`),
		"the hit is scrolled into view")
	require.False(t, isLive(s.rt, "long"), "opening a hit activates nothing")
	p.shot("hit-opened")

	p.do(chromedp.Focus(chromedp.ID("search-input")))
	p.key(kb.Escape)
	p.until(`!document.querySelector('#session-list').hidden && document.querySelector('#search-panel').hidden`)
	require.Equal(t, "", eval[string](p, `document.querySelector('#search-input').value`))

	p.do(chromedp.SendKeys(chromedp.ID("search-input"), `"needle" OR`+kb.Enter))
	p.until(`document.querySelector('#search-form').dataset.state === 'idle' && document.querySelector('#search-status').textContent === '没有找到“"needle" OR”'`)
	require.Zero(t, eval[int](p, `document.querySelectorAll('.hit').length`), "FTS syntax is literal text")
	p.shot("no-hits")

	p.do(chromedp.Navigate(s.url + "/?lang=en"))
	p.until(`document.querySelector('#connection').dataset.state === 'connected'`)
	require.Equal(t, "Search sessions", eval[string](p, `document.querySelector('#search-input').getAttribute('aria-label')`))
	p.do(chromedp.SendKeys(chromedp.ID("search-input"), "haystack"+kb.Enter))
	p.until(`document.querySelector('#search-form').dataset.state === 'idle' && document.querySelector('#search-status').textContent === '2 results'`)
	require.Equal(t, []string{"Agent", "You"}, eval[[]string](p, `[...document.querySelectorAll('.hit-meta')].map((e) => e.textContent)`))
	p.key(kb.Escape)
	p.do(chromedp.SendKeys(chromedp.ID("search-input"), "另一个会话 HAYSTACK"+kb.Enter))
	p.until(`document.querySelector('#search-form').dataset.state === 'idle' && document.querySelector('#search-status').textContent === '2 results'`)
	require.Equal(t, "另一个会话 haystack", eval[string](p, `document.querySelector('.hit mark').textContent`), "marked case-insensitively")
}

// talk starts the top-level agent id on the stack's runtime and waits for
// each prompt's turn.
func talk(t *testing.T, s *runtimeStack, id string, prompts ...string) {
	t.Helper()
	started(t, s.rt, id)
	for _, prompt := range prompts {
		converse(t, s.rt, id, prompt)
	}
}
