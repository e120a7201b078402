package host

import (
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// TestBrowserFailedTurnAndRetry: a failed turn reads "failed" in red text
// in the sidebar and the heading, the conversation shows the failure's
// message and code, and Retry sends the failed turn's message again; in
// Chinese the same, translated.
func TestBrowserFailedTurnAndRetry(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	p := openPage(t, chromium)
	for _, tc := range []struct{ lang, failed, retry, title string }{
		{"en", "failed · live", "Retry this message", "This turn failed"},
		{"zh", "失败 · 在线", "重试这条消息", "本轮失败"},
	} {
		id := openFreshSession(p, s, tc.lang)
		s.failTurn(t, id, "reply again please", vocab.Failure{Message: "upstream exploded", Code: "HTTP_500"})
		p.until(`document.querySelector('.message.outcome.failed .retry-turn') !== null`)
		require.Equal(t, tc.title+"upstream explodedHTTP_500"+tc.retry, eval[string](p, `document.querySelector('.message.outcome.failed').textContent`))
		p.until(`document.querySelector('.session[aria-current="page"]').dataset.state === 'failed'`)
		require.Equal(t, tc.failed, eval[string](p, `document.querySelector('.session[aria-current="page"] .state').textContent`))
		require.Equal(t, tc.failed, eval[string](p, `document.querySelector('#conversation-status').textContent`))
		require.Equal(t, "rgb(179, 38, 30)", eval[string](p, `getComputedStyle(document.querySelector('#conversation-status .state')).color`),
			"red, and said in words")
		p.shot("failed-" + tc.lang)

		prompts := s.recorder.count("session.prompt", map[string]any{"sessionId": id})
		eval[bool](p, `(document.querySelector('.retry-turn').click(), true)`)
		p.until(`[...document.querySelectorAll('.message.assistant .body')].some((b) => b.textContent === 'again please')`)
		require.Equal(t, prompts+1, s.recorder.count("session.prompt", map[string]any{"sessionId": id}))
		p.until(`document.querySelector('.retry-turn') === null && document.querySelector('.session[aria-current="page"]').dataset.state === 'idle'`)
	}
}

// TestBrowserStopARunningTurn: a running top-level turn offers Stop
// ("停止生成" / "Stop generating"); it calls session.cancel, the turn ends
// stopped (amber, in words) and Stop goes away.
func TestBrowserStopARunningTurn(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	p := openPage(t, chromium)
	for _, tc := range []struct{ lang, stop, stopped string }{
		{"zh", "停止生成", "本轮已停止"},
		{"en", "Stop generating", "This turn was stopped"},
	} {
		id := openFreshSession(p, s, tc.lang)
		p.until(`!document.querySelector('#composer-input').disabled`)
		require.True(t, eval[bool](p, `document.querySelector('#composer-stop').hidden`), "nothing runs: no Stop")
		p.send("sleep 1m")
		p.until(`!document.querySelector('#composer-stop').hidden`)
		require.Equal(t, tc.stop, eval[string](p, `document.querySelector('#composer-stop').textContent`))
		require.Equal(t, "running", eval[string](p, `document.querySelector('#conversation-status').dataset.state`))
		p.until(`document.querySelector('#conversation-title').textContent === 'sleep 1m'`)
		p.shot("running-" + tc.lang)
		p.do(chromedp.Click(chromedp.ID("composer-stop")))
		p.until(`document.querySelector('.message.outcome.stopped') !== null && document.querySelector('#composer-stop').hidden`)
		require.Equal(t, tc.stopped, eval[string](p, `document.querySelector('.message.outcome.stopped').textContent`))
		require.Equal(t, 1, s.recorder.count("session.cancel", map[string]any{"sessionId": id}))
		p.until(`document.querySelector('#conversation-status').dataset.state === 'stopped'`)
		require.Zero(t, eval[int](p, `document.querySelectorAll('.retry-turn').length`), "a stopped turn is not offered again")
		waitIdle(t, s.rt, id, "sleep 1m (stopped)")
		p.shot("stopped-" + tc.lang)
	}
}

// openFreshSession is openNewSession on a page that forgot what it had
// open (else the restored session could pass for the new one).
func openFreshSession(p *browserPage, s *runtimeStack, lang string) string {
	openFreshPage(p, s, lang)
	return openNewSession(p, s, lang)
}

// openFreshPage loads the page in lang with nothing open, connected.
func openFreshPage(p *browserPage, s *runtimeStack, lang string) {
	p.do(chromedp.Navigate(s.url + "/?lang=" + lang))
	eval[bool](p, `(localStorage.clear(), true)`)
	p.do(chromedp.Navigate(s.url + "/?lang=" + lang))
	p.until(`document.querySelector('#connection').dataset.state === 'connected'`)
}
