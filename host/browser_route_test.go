package host

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// TestBrowserOneShotChildOpensThroughSessionHistory: a search hit inside
// a one-shot child (a session with a parent that its parent's catalog does
// not list) opens through session.history, never the subagent route, and
// reads as a one-shot record with no composer; "show child sessions" in
// the sidebar reaches it too, under its parent.
func TestBrowserOneShotChildOpensThroughSessionHistory(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	ctx := context.Background()
	top, err := s.rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "top"}})
	require.NoError(t, err)
	converse(t, top, "reply the parent speaks")
	once, err := s.rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "once", ParentSession: "top"},
		Spec: parent.Spec{Owner: top}})
	require.NoError(t, err)
	converse(t, once, "reply a needle in the one-shot child")
	require.NoError(t, once.Dispose(ctx))

	p := openPage(t, chromium)
	p.do(chromedp.Navigate(s.url + "/?lang=en"))
	p.until(`document.querySelector('#connection').dataset.state === 'connected'`)
	p.until(`document.querySelector('#session-list .session[data-id="top"]') !== null`)
	require.Zero(t, eval[int](p, `document.querySelectorAll('#session-list .session[data-id="once"]').length`),
		"children are not listed unless asked for")
	p.do(chromedp.SendKeys(chromedp.ID("search-input"), "needle"+"\r"))
	p.until(`document.querySelector('.hit[data-id="once"]') !== null`)
	eval[bool](p, `(document.querySelector('.hit[data-id="once"]').click(), true)`)
	p.until(`[...document.querySelectorAll('.message.assistant .body')].some((m) => m.textContent === 'a needle in the one-shot child')`)
	require.Positive(t, s.recorder.count("session.history", map[string]any{"sessionId": "once"}))
	require.Zero(t, s.recorder.count("subagent.history", nil), "not a catalog address: no subagent route")
	p.until(`!document.querySelector('#composer-readonly').hidden`)
	require.Equal(t, "One-shot subagent recordOne-shot tasks do not accept follow-ups; review the full execution record here.Open the parent session",
		eval[string](p, `document.querySelector('#composer-readonly').textContent`))
	require.True(t, eval[bool](p, `document.querySelector('#composer-form').hidden`), "not presented as continuable")
	require.True(t, eval[bool](p, `document.querySelector('#composer-stop').hidden`))
	p.shot("one-shot-hit")

	eval[bool](p, `(localStorage.clear(), true)`) // open nothing on load
	p.do(chromedp.Navigate(s.url + "/?lang=zh"))
	p.until(`document.querySelector('#session-list .session[data-id="top"]') !== null`)
	require.Equal(t, "显示子会话", eval[string](p, `document.querySelector('#show-children-label').textContent`))
	p.do(chromedp.Click(chromedp.ID("show-children")))
	p.until(`document.querySelector('#session-list .session.child[data-id="once"]') !== null`)
	require.Equal(t, []string{"top", "once"}, eval[[]string](p, `[...document.querySelectorAll('#session-list .session')].map((b) => b.dataset.id)`),
		"the child follows its parent")
	histories := s.recorder.count("session.history", map[string]any{"sessionId": "once"})
	eval[bool](p, `(document.querySelector('#session-list .session.child[data-id="once"]').click(), true)`)
	p.until(`!document.querySelector('#composer-readonly').hidden && document.querySelector('#composer-readonly').textContent.startsWith('一次性子代理记录')`)
	require.Eventually(t, func() bool {
		return s.recorder.count("session.history", map[string]any{"sessionId": "once"}) > histories
	},
		time.Minute, 10*time.Millisecond, "waiting for the child's session.history")
	require.Zero(t, s.recorder.count("subagent.history", nil))
	p.shot("one-shot-sidebar")
}
