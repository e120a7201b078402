package host

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
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
	once := storeOneShotChild(t, s, "reply a needle in the one-shot child")

	p := openPage(t, chromium)
	p.do(chromedp.Navigate(s.url + "/?lang=en"))
	p.until(`document.querySelector('#connection').dataset.state === 'connected'`)
	p.until(`document.querySelector('#session-list .session[data-id="top"]') !== null`)
	require.Zero(t, eval[int](p, `document.querySelectorAll('#session-list .session[data-id="`+once+`"]').length`),
		"children are not listed unless asked for")
	p.do(chromedp.SendKeys(chromedp.ID("search-input"), "needle"+"\r"))
	p.until(`document.querySelector('.hit[data-id="` + once + `"]') !== null`)
	eval[bool](p, `(document.querySelector('.hit[data-id="`+once+`"]').click(), true)`)
	p.until(`[...document.querySelectorAll('.message.assistant .body')].some((m) => m.textContent === 'a needle in the one-shot child')`)
	require.Positive(t, s.recorder.count("session.history", map[string]any{"sessionId": once}))
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
	p.until(`document.querySelector('#session-list .session.child[data-id="` + once + `"]') !== null`)
	require.Equal(t, []string{"top", once}, eval[[]string](p, `[...document.querySelectorAll('#session-list .session')].map((b) => b.dataset.id)`),
		"the child follows its parent")
	histories := s.recorder.count("session.history", map[string]any{"sessionId": once})
	eval[bool](p, `(document.querySelector('#session-list .session.child[data-id="`+once+`"]').click(), true)`)
	p.until(`!document.querySelector('#composer-readonly').hidden && document.querySelector('#composer-readonly').textContent.startsWith('一次性子代理记录')`)
	require.Eventually(t, func() bool {
		return s.recorder.count("session.history", map[string]any{"sessionId": once}) > histories
	},
		time.Minute, 10*time.Millisecond, "waiting for the child's session.history")
	require.Zero(t, s.recorder.count("subagent.history", nil))
	p.shot("one-shot-sidebar")
}

// TestBrowserContinuableChildFromTheSidebar: a continuable child its
// parent spawned while the page showed another session (so the parent's
// catalog the page holds is older than the child) opens from "show child
// sessions" through the subagent route with its composer, not as a
// one-shot record; a damaged continuable child (a diagnostic in that
// catalog) opens read-only saying it cannot take messages.
func TestBrowserContinuableChildFromTheSidebar(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	p := openPage(t, chromium)
	openFreshPage(p, s, "en")
	parentID := openNewSession(p, s, "en")
	p.until(`!document.querySelector('#composer-input').disabled`)
	p.send("spawn first: reply one")
	p.until(`document.querySelector('.trigger')?.textContent === '1 subagent'`)
	s.settled(t, parentID, 1)
	p.do(chromedp.Click(chromedp.ID("new-session")))
	p.until(fmt.Sprintf(`document.querySelector('.session[aria-current="page"]')?.dataset.id !== %s`, js(parentID)))

	converse(t, s.rt, parentID, "spawn later: reply two")
	var later string
	for _, e := range s.settled(t, parentID, 2) {
		if e.Label == "later" {
			later = e.ID
		}
	}
	require.NotEmpty(t, later)
	p.do(chromedp.Click(chromedp.ID("show-children")))
	row := fmt.Sprintf(`#session-list .session.child[data-id=%s]`, js(later))
	p.until(fmt.Sprintf(`document.querySelector(%s) !== null`, js(row)))
	eval[bool](p, fmt.Sprintf(`(document.querySelector(%s).click(), true)`, js(row)))
	p.until(`document.querySelector('#conversation-title').textContent === 'later'`)
	p.until(`!document.querySelector('#composer-form').hidden && !document.querySelector('#composer-input').disabled`)
	require.True(t, eval[bool](p, `document.querySelector('#composer-readonly').hidden`), "no one-shot notice for a continuable child")
	require.Positive(t, s.recorder.count("subagent.history", map[string]any{"parentSessionId": parentID, "childSessionId": later}))
	p.shot("continuable-from-sidebar")

	scarred, _ := plantDamagedChild(t, s, parentID)
	row = fmt.Sprintf(`#session-list .session.child[data-id=%s]`, js(scarred))
	p.do(chromedp.Reload()) // the sidebar learns of stored sessions on a reload
	p.until(`document.querySelector('#connection').dataset.state === 'connected'`)
	if !eval[bool](p, `document.querySelector('#show-children').checked`) {
		p.do(chromedp.Click(chromedp.ID("show-children")))
	}
	p.until(fmt.Sprintf(`document.querySelector(%s) !== null`, js(row)))
	eval[bool](p, fmt.Sprintf(`(document.querySelector(%s).click(), true)`, js(row)))
	p.until(`!document.querySelector('#damage-notice').hidden && !document.querySelector('#composer-readonly').hidden`)
	require.Equal(t, "This subagent cannot take messagesIts record cannot be read (session record unreadable), so it cannot continue; what could be read is shown above.Open the parent session",
		eval[string](p, `document.querySelector('#composer-readonly').textContent`))
	p.shot("damaged-continuable-from-sidebar")
}

// TestBrowserRestoredChildIsAddressedLikeTheSidebar: after a reload, the
// restored selection of a child saved without a catalog address goes the
// sidebar's way: a damaged continuable child shows that it cannot take
// messages and why, and a one-shot child still reads as a one-shot record.
func TestBrowserRestoredChildIsAddressedLikeTheSidebar(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	once := storeOneShotChild(t, s, "reply the one-shot child speaks")
	scarred, _ := plantDamagedChild(t, s, "top")

	p := openPage(t, chromium)
	p.do(chromedp.Navigate(s.url + "/?lang=en"))
	p.until(`document.querySelector('#connection').dataset.state === 'connected'`)
	for _, tc := range []struct{ id, notice string }{
		{scarred, "This subagent cannot take messagesIts record cannot be read (session record unreadable), so it cannot continue; what could be read is shown above.Open the parent session"},
		{once, "One-shot subagent recordOne-shot tasks do not accept follow-ups; review the full execution record here.Open the parent session"},
	} {
		if !eval[bool](p, `document.querySelector('#show-children').checked`) {
			p.do(chromedp.Click(chromedp.ID("show-children")))
		}
		row := fmt.Sprintf(`#session-list .session.child[data-id=%s]`, js(tc.id))
		p.until(fmt.Sprintf(`document.querySelector(%s) !== null`, js(row)))
		eval[bool](p, fmt.Sprintf(`(document.querySelector(%s).click(), true)`, js(row)))
		shown := fmt.Sprintf(`!document.querySelector('#composer-readonly').hidden && document.querySelector('#composer-readonly').textContent === %s`, js(tc.notice))
		p.until(shown)
		require.Equal(t, tc.id+"/none", eval[string](p, `((s) => s.sessionId + '/' + (s.subagentAddress ? 'address' : 'none'))(JSON.parse(localStorage.getItem('dsh.sessions.current')))`),
			"saved without a catalog address")
		p.do(chromedp.Reload())
		p.until(`document.querySelector('#connection').dataset.state === 'connected'`)
		p.until(shown)
		require.True(t, eval[bool](p, `document.querySelector('#composer-form').hidden`), "no composer for %s", tc.id)
		p.shot("restored-" + tc.id)
	}
}

// storeOneShotChild starts the live top-level session "top" (one turn
// logged) and runs its one-shot child through the spawn provider, which
// logs one turn answering prompt and is disposed: a session with a parent
// that the parent's catalog does not list. It returns the child's id.
func storeOneShotChild(t *testing.T, s *runtimeStack, prompt string) string {
	t.Helper()
	ctx := context.Background()
	children := make(chan string, 1)
	defer s.rt.Subscribe(func(n dsh.Notice) {
		if n.Kind == dsh.SessionLive && n.ParentSessionID == "top" {
			select {
			case children <- n.SessionID:
			default:
			}
		}
	})()
	started(t, s.rt, "top")
	converse(t, s.rt, "top", "reply the parent speaks")
	top, ok := s.rt.Agent("top")
	require.True(t, ok)
	_, err := s.rt.Delegate(ctx, top, "spawn", event.Text(prompt))
	require.NoError(t, err)
	select {
	case id := <-children:
		return id
	default:
		require.Fail(t, "the one-shot child never became live")
		return ""
	}
}
