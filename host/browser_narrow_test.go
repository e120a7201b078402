package host

import (
	"os/exec"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// TestBrowserNarrowAndDark: at 420 px the page is no wider than the
// window (nothing scrolls sideways), with a long title, a failed turn and
// an open tree; screenshots in both languages, light and dark.
func TestBrowserNarrowAndDark(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	p := openPage(t, chromium)
	_, err := chromedp.Call(p.ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: 420, Height: 860, DeviceScaleFactor: 1})
	require.NoError(t, err)
	for _, lang := range []string{"zh", "en"} {
		id := openFreshSession(p, s, lang)
		p.until(`!document.querySelector('#composer-input').disabled`)
		p.send("spawn a-child-with-a-rather-long-label-that-goes-on: sleep 2s\nreply a very long first line that names this session so that its title cannot fit in a narrow sidebar row at all")
		p.until(`document.querySelector('.trigger') !== null && !document.querySelector('#catalog-action').hidden`)
		s.failTurn(t, id, "reply again", vocab.Failure{Message: "upstream exploded with a long explanation of what went wrong upstream", Code: "HTTP_500"})
		p.until(`document.querySelector('.message.outcome.failed .retry-turn') !== null`)
		eval[bool](p, `(document.querySelector('.trigger').click(), true)`)
		p.until(`document.querySelectorAll('[role="tree"] [role="treeitem"]').length > 0`)
		for _, theme := range []string{"light", "dark"} {
			_, err := chromedp.Call(p.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: theme}}})
			require.NoError(t, err)
			require.LessOrEqual(t, eval[int](p, `document.documentElement.scrollWidth`), 420, "the page fits 420 px (%s, %s)", lang, theme)
			p.shot("narrow-" + lang + "-" + theme)
		}
	}
}
