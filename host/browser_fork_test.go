package host

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// openNewSession loads the page in lang, creates a session from it and
// returns the session's id once the page shows it as the current one.
func openNewSession(p *browserPage, s *runtimeStack, lang string) string {
	p.do(chromedp.Navigate(s.url + "/?lang=" + lang))
	p.until(`document.querySelector('#connection').dataset.state === 'connected'`)
	// The page reopens the session it showed last; the new one is current
	// only once the stored selection has moved off that one.
	current := `JSON.parse(localStorage.getItem('dsh.sessions.current') ?? 'null')?.sessionId ?? ''`
	restored := eval[string](p, current)
	p.do(chromedp.Click(chromedp.ID("new-session")))
	p.until(fmt.Sprintf(`(() => { const id = %s; return id !== %s && document.querySelector('.session[aria-current="page"]')?.dataset.id === id; })()`, current, js(restored)))
	return eval[string](p, current)
}

// TestBrowserForkChildShowsItsInheritedTurns: a fork child opened from the
// tree shows the parent's completed turns it inherited, then its own turn,
// whose scripted history reply lists them too; a spawn child shows only
// its own. Each message is labelled by its real author.
func TestBrowserForkChildShowsItsInheritedTurns(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	p := openPage(t, chromium)
	parentID := openNewSession(p, s, "en")
	p.until(`!document.querySelector('#composer-input').disabled`)

	p.send("reply the parent's first answer")
	p.until(`[...document.querySelectorAll('.message.assistant')].some((m) => m.textContent.includes("the parent's first answer"))`)
	p.send("fork helper: history\nspawn loner: history")
	p.until(`document.querySelector('.trigger')?.textContent === '2 subagents'`)
	entries := s.settled(t, parentID, 2)
	ids := map[string]string{}
	for _, e := range entries {
		ids[e.Label] = e.ID
	}
	require.Len(t, ids, 2)

	p.do(chromedp.Click(chromedp.CSS(".trigger")))
	clickRow(p, ids["helper"], "label")
	p.until(`document.querySelector('#conversation-title').textContent === 'helper'`)
	p.until(`[...document.querySelectorAll('.message.assistant')].some((m) => m.textContent.includes('user: history'))`)
	require.Equal(t, []string{"reply the parent's first answer", "history"},
		eval[[]string](p, `[...document.querySelectorAll('.message.user .body')].map((m) => m.textContent)`),
		"the fork child shows the parent's completed turn it inherited, then its own prompt")
	require.Equal(t, []string{"You", "Parent agent"},
		eval[[]string](p, `[...document.querySelectorAll('.message.user .author')].map((m) => m.textContent)`),
		"an inherited message keeps its real author; the child's own prompt is the parent's")
	history := eval[string](p, `[...document.querySelectorAll('.message.assistant')].at(-1).textContent`)
	require.Contains(t, history, "user: reply the parent's first answer")
	require.Contains(t, history, "assistant: the parent's first answer")
	p.shot("fork-child")

	p.do(chromedp.Click(chromedp.CSS("#conversation-path button")))
	p.until(`document.querySelector('#conversation-path').hidden`)
	p.do(chromedp.Click(chromedp.CSS(".trigger")))
	clickRow(p, ids["loner"], "label")
	p.until(`document.querySelector('#conversation-title').textContent === 'loner'`)
	p.until(`[...document.querySelectorAll('.message.assistant')].some((m) => m.textContent.includes('user: history'))`)
	require.Equal(t, []string{"history"},
		eval[[]string](p, `[...document.querySelectorAll('.message.user .body')].map((m) => m.textContent)`),
		"a spawn child inherits nothing")
	require.Equal(t, []string{"Parent agent"},
		eval[[]string](p, `[...document.querySelectorAll('.message.user .author')].map((m) => m.textContent)`))
}
