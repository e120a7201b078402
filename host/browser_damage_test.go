package host

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// TestBrowserDamagedLogShowsItsReadablePrefix: a stored log damaged in
// its middle keeps its title in the sidebar; opening it shows the
// messages before the damage and a notice naming the line and the damage
// (the file), in both languages; no "internal" error.
func TestBrowserDamagedLogShowsItsReadablePrefix(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	talkAndStore(t, s.rt, "hurt", "reply one", "reply two", "reply three")
	path := damageLine(t, s.rt.Sessions().Store().(*session.JSONL).Root(), "", "hurt", 8)
	p := openPage(t, chromium)
	for _, tc := range []struct{ lang, title, body string }{
		{"en", "Damaged session record", "The record cannot be read from line 8 on: "},
		{"zh", "会话记录损坏", "第 8 行之后的记录无法读取："},
	} {
		p.do(chromedp.Navigate(s.url + "/?lang=" + tc.lang))
		p.until(`document.querySelector('#connection').dataset.state === 'connected'`)
		p.until(`document.querySelector('#session-list .session[data-id="hurt"] .title-text')?.textContent === 'reply one'`)
		eval[bool](p, `(document.querySelector('#session-list .session[data-id="hurt"]').click(), true)`)
		p.until(`!document.querySelector('#damage-notice').hidden`)
		notice := eval[string](p, `document.querySelector('#damage-notice').textContent`)
		require.Contains(t, notice, tc.title)
		require.Contains(t, notice, tc.body+"corrupt session log: unparsable committed event at line 8 (raw log: "+path+")")
		require.Equal(t, []string{"reply one", "one"},
			eval[[]string](p, `[...document.querySelectorAll('.message.user .body, .message.assistant .body')].map((m) => m.textContent)`),
			"the messages before the damaged line")
		require.True(t, eval[bool](p, `document.querySelector('#transcript-empty').hidden`), "no error in place of the transcript")
		require.NotContains(t, eval[string](p, `document.body.innerText`), "internal")
		p.shot(fmt.Sprintf("damaged-log-%s", tc.lang))
	}
}
