package host

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestBrowserPageCarriesItsToken: opened from the address serve prints
// (#token=…), the page sends the token with its calls and its event
// stream, so a server that wants it from this peer lists the sessions and
// stays connected; the page's own files need none.
func TestBrowserPageCarriesItsToken(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	b := newFakeBackend()
	_, err := b.CreateSession(context.Background(), createRequest{ID: "s-token", Cwd: "/w"})
	require.NoError(t, err)
	h := newHandler(b, Options{Token: "page-token-0123456789"})
	t.Cleanup(h.Close)
	remote := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.RemoteAddr = "192.0.2.44:5000" // as if the browser ran on another machine
		h.ServeHTTP(w, r)
	})
	server := httptest.NewServer(remote)
	t.Cleanup(server.Close)

	p := openPage(t, chromium)
	p.do(chromedp.Navigate(server.URL + "/?lang=en#token=page-token-0123456789"))
	p.until(`document.querySelector('#connection').dataset.state === 'connected'`)
	p.until(`document.querySelectorAll('#session-list .session-title').length === 1`)
	p.shot("connected-with-token")
	eval[bool](p, `fetch('/api/session.list', {method: 'POST', headers: {'content-type': 'application/json'},
		body: JSON.stringify({type: 'client-request', rpcId: 'x', method: 'session.list', payload: {}})})
		.then((r) => { window.tokenlessStatus = r.status; }), true`)
	p.until(`window.tokenlessStatus === 401`) // the same call without the token is refused
}
