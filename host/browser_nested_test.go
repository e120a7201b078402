package host

import (
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestBrowserNestedChildSaysHowToReachIt: a level-2 child whose parent (a
// child itself) is not live reads as read-only with a notice that says to
// start from the top-level session, not "send the parent a message".
func TestBrowserNestedChildSaysHowToReachIt(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	p := openPage(t, chromium)
	openFreshPage(p, s, "en")
	parentID := openNewSession(p, s, "en")
	p.until(`!document.querySelector('#composer-input').disabled`)
	p.send("spawn outer: spawn inner: reply deep")
	p.until(`document.querySelector('.trigger')?.textContent === '1 subagent'`)
	outer := s.settled(t, parentID, 1)[0].ID
	s.settled(t, outer, 1)
	p.do(chromedp.Click(chromedp.CSS(".trigger")))
	clickRow(p, outer, "disclosure")
	p.until(`document.querySelector('[role="treeitem"][aria-level="2"]') !== null`)
	inner := eval[string](p, `document.querySelector('[role="treeitem"][aria-level="2"]').dataset.id`)
	clickRow(p, inner, "label")
	p.until(`document.querySelector('#conversation-title').textContent === 'inner' && !document.querySelector('#composer-readonly').hidden`)
	require.Contains(t, eval[string](p, `document.querySelector('#composer-readonly').textContent`),
		"this parent is itself a subagent: get the top-level session running again")
	require.True(t, eval[bool](p, `document.querySelector('#composer-stop').hidden`), "no Stop in a child view")
	p.shot("nested-read-only")
}
