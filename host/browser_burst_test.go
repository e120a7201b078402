package host

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// watchMainThread starts a timer in the page that keeps the longest gap
// between its ticks: how long the main thread was kept from running it.
const watchMainThread = `(() => {
  window.__longestGap = 0;
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    window.__longestGap = Math.max(window.__longestGap, now - last);
    last = now;
    window.__gapTimer = setTimeout(tick, 10);
  };
  window.__gapTimer = setTimeout(tick, 10);
  return true;
})()`

// spawnBurst has the open session spawn n children in one turn, waits for
// the header to count them and the tree to list them all, and returns the
// longest gap the page's timer saw meanwhile (in ms).
func spawnBurst(t testing.TB, p *browserPage, n int) float64 {
	var script strings.Builder
	for i := range n {
		fmt.Fprintf(&script, "spawn kid%03d: reply k%03d\n", i, i)
	}
	script.WriteString("reply burst done")
	eval[bool](p, watchMainThread)
	p.send(script.String())
	count := fmt.Sprintf("%d subagents", n)
	if n == 1 {
		count = "1 subagent"
	}
	p.until(fmt.Sprintf(`document.querySelector('.trigger')?.textContent === %s`, js(count)))
	p.until(`[...document.querySelectorAll('.message.assistant .body')].some((m) => m.textContent === 'burst done')`)
	eval[bool](p, `(document.querySelector('.trigger').click(), true)`)
	labels := scrolledLabels(t, p, n)
	// The catalog orders children by createdAt, then id: two spawned in
	// the same millisecond may list in either order, so every child must
	// be there once, in whatever order their records give.
	slices.Sort(labels)
	for i, label := range labels {
		require.Equal(t, fmt.Sprintf("kid%03d", i), label, "child %d", i)
	}
	return eval[float64](p, `(clearTimeout(window.__gapTimer), window.__longestGap)`)
}

// TestBrowserChildBurst: 150 children spawned in one turn all reach the
// header's count and the tree, each once. The longest main-thread
// gap is logged here and reported by BenchmarkBrowserChildBurst; it is not
// asserted.
func TestBrowserChildBurst(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	p := openPage(t, chromium)
	openNewSession(p, s, "en")
	p.until(`!document.querySelector('#composer-input').disabled`)
	gap := spawnBurst(t, p, 150)
	t.Logf("longest main-thread gap during a 150-child burst: %.0f ms", gap)
	p.shot("burst")
}

// BenchmarkBrowserChildBurst reports the longest main-thread gap while the
// page follows a 150-child burst, against a one-child burst in the same
// run (gap-ratio: burst/baseline).
func BenchmarkBrowserChildBurst(b *testing.B) {
	chromium := chromiumPath(b, exec.LookPath)
	for b.Loop() {
		baseline := burstGap(b, chromium, 1)
		burst := burstGap(b, chromium, 150)
		b.ReportMetric(burst, "longest-gap-ms")
		b.ReportMetric(baseline, "baseline-gap-ms")
		b.ReportMetric(burst/baseline, "gap-ratio")
	}
}

func burstGap(b *testing.B, chromium string, n int) float64 {
	s := newRuntimeStack(b)
	p := openPage(b, chromium)
	openNewSession(p, s, "en")
	p.until(`!document.querySelector('#composer-input').disabled`)
	gap := spawnBurst(b, p, n)
	s.stop()
	return gap
}
