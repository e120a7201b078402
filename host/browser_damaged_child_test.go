package host

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// plantDamagedChild stores a continuable child of parentID whose log holds
// its descriptor and two user messages, the second without its message
// id: readable up to the first message. It returns the child's id and the log's path.
func plantDamagedChild(t *testing.T, s *runtimeStack, parentID string) (string, string) {
	t.Helper()
	d, err := descriptor.Snapshot(descriptor.Data{Provider: "spawn", Label: "scarred"})
	require.NoError(t, err)
	data, err := json.Marshal(d)
	require.NoError(t, err)
	id := parentID + "-scarred"
	message := func(id, text string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"id":%q,"role":"user","source":{"kind":"user"},"content":[{"type":"text","text":%q}]}`, id, text))
	}
	s.plant(t, func(store *session.JSONL) {
		plant(t, store, session.Header{ID: id, ParentSession: parentID, Origin: "subagent", DelegationDepth: 1},
			session.Event{Type: vocab.TypeSubagentDescriptor, Data: data},
			session.Event{Type: vocab.TypeUserMessage, Data: message("m1", "before the damage")},
			session.Event{Type: vocab.TypeUserMessage, Data: message("", "lost to the damage")})
	})
	path, err := logpath.Path(s.root, "", id)
	require.NoError(t, err)
	return id, path
}

// TestBrowserDamagedChildIsUnreadable: a child whose log fails validation
// is a disabled tree row saying its record cannot be read (not that it is
// temporarily unavailable); opening it from the sidebar shows what could
// be read and under it the damage notice naming the event and the file,
// in both languages.
func TestBrowserDamagedChildIsUnreadable(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStackOn(t, t.TempDir(), false, "none") // the notice names session.jsonl
	talkAndStore(t, s.rt, "mom", "reply hello")
	child, path := plantDamagedChild(t, s, "mom")
	p := openPage(t, chromium)
	for _, tc := range []struct{ lang, row, title, after string }{
		{"en", "session record unreadable", "Damaged session record", "The record cannot be read past what is shown above"},
		{"zh", "会话记录无法读取", "会话记录损坏", "上面显示的部分之后的记录无法读取"},
	} {
		openFreshPage(p, s, tc.lang)
		p.until(`document.querySelector('#session-list .session[data-id="mom"]') !== null`)
		eval[bool](p, `(document.querySelector('#session-list .session[data-id="mom"]').click(), true)`)
		p.until(`document.querySelector('#catalog-action .trigger') !== null && !document.querySelector('#catalog-action').hidden`)
		eval[bool](p, `(document.querySelector('.trigger').click(), true)`)
		row := rowSelector(child)
		p.until(fmt.Sprintf(`document.querySelector(%s) !== null`, js(row)))
		require.Equal(t, tc.row, eval[string](p, fmt.Sprintf(`document.querySelector(%s + ' .secondary').textContent`, js(row))))
		require.Equal(t, "true", eval[string](p, fmt.Sprintf(`document.querySelector(%s).getAttribute('aria-disabled')`, js(row))))
		p.do(chromedp.Click(chromedp.ID("show-children")))
		sidebarRow := fmt.Sprintf(`#session-list .session[data-id=%s]`, js(child))
		p.until(fmt.Sprintf(`document.querySelector(%s) !== null`, js(sidebarRow)))
		eval[bool](p, fmt.Sprintf(`(document.querySelector(%s).click(), true)`, js(sidebarRow)))
		p.until(`!document.querySelector('#damage-notice').hidden`)
		notice := eval[string](p, `document.querySelector('#damage-notice').textContent`)
		require.Contains(t, notice, tc.title)
		require.Contains(t, notice, tc.after)
		require.Contains(t, notice, "session event at seq 2 lacks an identified message (raw log: "+path+")")
		require.Equal(t, []string{"before the damage"}, eval[[]string](p, `[...document.querySelectorAll('#messages .message .body')].map((b) => b.textContent)`),
			"the readable prefix is shown above the notice")
		require.NotContains(t, eval[string](p, `document.body.innerText`), "temporarily")
		require.NotContains(t, eval[string](p, `document.body.innerText`), "暂不可用")
		p.shot(fmt.Sprintf("damaged-child-%s", tc.lang))
	}
}
