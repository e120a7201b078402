package host

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// sampleHeader records, at every animation frame, the heading and the
// header action as painted: [title, count text or "" when hidden].
const sampleHeader = `(() => {
  window.__header = [];
  const sample = () => {
    const trigger = document.querySelector('.trigger');
    const shown = trigger && !document.querySelector('#catalog-action').hidden;
    window.__header.push([document.querySelector('#conversation-title').textContent, shown ? trigger.textContent : '']);
    window.__sampling = requestAnimationFrame(sample);
  };
  window.__sampling = requestAnimationFrame(sample);
  return true;
})()`

// TestBrowserHeaderCountIsTheOpenSessions: switching between two sessions
// with 2 and 3 children, no painted frame shows one session's title with
// the other's count.
func TestBrowserHeaderCountIsTheOpenSessions(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	p := openPage(t, chromium)
	openFreshPage(p, s, "en")
	counts := map[string]string{}
	for _, n := range []int{2, 3} {
		openNewSession(p, s, "en")
		p.until(`!document.querySelector('#composer-input').disabled`)
		script := ""
		for i := range n {
			script += fmt.Sprintf("spawn c%d_%d: reply hi\n", n, i)
		}
		title := fmt.Sprintf("spawn c%d_0: reply hi", n)
		p.send(script + "reply done")
		want := fmt.Sprintf("%d subagents", n)
		p.until(fmt.Sprintf(`document.querySelector('.trigger')?.textContent === %s && document.querySelector('#conversation-title').textContent === %s`, js(want), js(title)))
		counts[title] = want
	}
	eval[bool](p, sampleHeader)
	for range 3 {
		for title, want := range counts {
			eval[bool](p, fmt.Sprintf(`([...document.querySelectorAll('#session-list .session')].find((b) => b.querySelector('.title-text').textContent === %s).click(), true)`, js(title)))
			p.until(fmt.Sprintf(`document.querySelector('.trigger')?.textContent === %s && document.querySelector('#conversation-title').textContent === %s`, js(want), js(title)))
		}
	}
	samples := eval[[][]string](p, `(cancelAnimationFrame(window.__sampling), window.__header)`)
	require.NotEmpty(t, samples)
	for _, sample := range samples {
		if want, ok := counts[sample[0]]; ok && sample[1] != "" {
			require.Equal(t, want, sample[1], "the count painted with %q", sample[0])
		}
	}
}
