package host

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestBrowserDamagedLogShowsItsReadablePrefix: a stored log damaged in
// its middle keeps its title in the sidebar; opening it shows the
// messages before the damage and a notice naming the line and the damage
// (the file), in both languages; no "internal" error, and in place of the
// composer a notice that no message can resume it.
func TestBrowserDamagedLogShowsItsReadablePrefix(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStackOn(t, t.TempDir(), false, "none") // a damaged JSONL line
	talkAndStore(t, s.rt, "hurt", "reply one", "reply two", "reply three")
	path := damageLine(t, s.root, "", "hurt", 8)
	p := openPage(t, chromium)
	for _, tc := range []struct{ lang, title, body, composer string }{
		{"en", "Damaged session record", "The record cannot be read from line 8 on: ",
			"This conversation cannot continueIts record is damaged, so no new message can resume it; what could be read is shown above."},
		{"zh", "会话记录损坏", "第 8 行之后的记录无法读取：", "此会话无法继续它的会话记录已损坏，新消息无法让它继续运行；上面是能读出的部分。"},
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
		p.until(`document.querySelector('#composer-form').hidden && !document.querySelector('#composer-readonly').hidden`)
		require.Equal(t, tc.composer, eval[string](p, `document.querySelector('#composer-readonly').textContent`),
			"no message can resume a damaged log: no composer, no parent to open")
		p.shot(fmt.Sprintf("damaged-log-%s", tc.lang))
	}
}
