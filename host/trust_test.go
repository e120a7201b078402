package host

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTrustFence: loopback or configured Host, no cross-site fetch, an
// Origin equal to the Host. Rows marked "refused: written form" were
// allowed while the fence imitated a browser's URL parser (which rewrites
// 127.1, 0x7f.1, %6Cocalhost, userinfo and paths before comparing); a
// browser never sends such a Host or Origin header, so the fence now
// refuses them.
func TestTrustFence(t *testing.T) {
	configured := []string{"dsh.example:8443", "lan-box", "Plain:80", "dangling:", "xn--bcher-kva.example", "[fe80::1]:7499", "10.0.0.7"}
	cases := []struct {
		name, host   string
		origin, site []string // header values, nil when absent
		trustedHosts []string
		allowed      bool
	}{
		{"localhost", "localhost:7499", nil, nil, nil, true},
		{"127.0.0.1", "127.0.0.1:7499", nil, nil, nil, true},
		{"127.9.8.7 without port", "127.9.8.7", nil, nil, nil, true},
		{"ipv6 loopback", "[::1]:7499", nil, nil, nil, true},
		{"same-origin fetch", "127.0.0.1:7499", []string{"http://127.0.0.1:7499"}, []string{"same-origin"}, nil, true},
		{"foreign host (DNS rebinding)", "evil.example:7499", nil, nil, nil, false},
		{"128.0.0.1", "128.0.0.1:7499", nil, nil, nil, false},
		{"localhost.evil", "localhost.evil.example", nil, nil, nil, false},
		{"no Host", "", nil, nil, nil, false},
		// A default port counts as absent; the cross-site match is
		// case-sensitive; ::1 needs brackets.
		{"127.1 refused: written form", "127.1:7499", nil, nil, nil, false},
		{"localhost:80 equals origin http://localhost", "localhost:80", []string{"http://localhost"}, nil, nil, true},
		{"Sec-Fetch-Site Cross-Site is not cross-site", "127.0.0.1:7499", nil, []string{"Cross-Site"}, nil, true},
		{"unbracketed ::1", "::1", nil, nil, nil, false},
		{"unbracketed ::1 with port", "::1:7499", nil, nil, nil, false},
		// Names compare case-insensitively, addresses canonically, ports
		// without leading zeros; any other written form is refused.
		{"uppercase LOCALHOST", "LOCALHOST:7499", nil, nil, nil, true},
		{"hex 0x7f.1 refused: written form", "0x7f.1:7499", nil, nil, nil, false},
		{"integer 2130706433 refused: written form", "2130706433", nil, nil, nil, false},
		{"octal 0177.0.0.1 refused: written form", "0177.0.0.1", nil, nil, nil, false},
		{"trailing dot 127.0.0.1. refused: written form", "127.0.0.1.:7499", nil, nil, nil, false},
		{"trailing dot localhost.", "localhost.:7499", nil, nil, nil, false},
		{"percent-encoded localhost refused: written form", "%6Cocalhost:7499", nil, nil, nil, false},
		{"127.0.0.256", "127.0.0.256", nil, nil, nil, false},
		{"127..1", "127..1", nil, nil, nil, false},
		{"09 is not octal", "127.0.0.09", nil, nil, nil, false},
		{"bracketed ipv4", "[127.0.0.1]:7499", nil, nil, nil, false},
		{"bracketed name", "[localhost]:7499", nil, nil, nil, false},
		{"expanded ipv6 loopback", "[0:0:0:0:0:0:0:1]:7499", nil, nil, nil, true},
		{"ipv4-mapped loopback", "[::ffff:127.0.0.1]:7499", nil, nil, nil, false},
		{"ipv6 with zone", "[::1%25lo]:7499", nil, nil, nil, false},
		{"port 65535", "localhost:65535", nil, nil, nil, true},
		{"port 65536", "localhost:65536", nil, nil, nil, false},
		{"zero-padded port", "localhost:007499", []string{"http://localhost:7499"}, nil, nil, true},
		{"dangling colon", "localhost:", nil, nil, nil, true},
		{"empty hostname with port", ":7499", nil, nil, nil, false},
		{"non-digit port", "localhost:74a9", nil, nil, nil, false},
		{"userinfo refused: written form", "evil.example@localhost:7499", nil, nil, nil, false},
		{"path after host refused: written form", "localhost:7499/x", nil, nil, nil, false},
		{"backslash after host refused: written form", "localhost\\evil.example", nil, nil, nil, false},
		{"query after host refused: written form", "localhost?evil.example", nil, nil, nil, false},
		{"space in host", "local host", nil, nil, nil, false},
		{"tab refused: written form", "local\thost:7499", nil, nil, nil, false},
		{"leading slashes refused: written form", "//localhost:7499", nil, nil, nil, false},
		{"forbidden code point", "local<host", nil, nil, nil, false},
		{"percent-encoded slash", "localhost%2Fevil", nil, nil, nil, false},
		// trustedHosts: an entry with a written port matches that authority,
		// a port-less one the hostname at any port, both sides normalized.
		{"configured authority", "dsh.example:8443", []string{"https://dsh.example:8443"}, nil, configured, true},
		{"configured authority, other case", "DSH.example:8443", nil, nil, configured, true},
		{"configured authority wrong port", "dsh.example:9999", nil, nil, configured, false},
		{"configured authority without port", "dsh.example", nil, nil, configured, false},
		{"configured host any port", "lan-box:1", nil, nil, configured, true},
		{"configured host no port", "lan-box", nil, nil, configured, true},
		{"configured host:80 matches port-less", "plain", nil, nil, configured, true},
		{"configured host:80 matches :80", "plain:80", nil, nil, configured, true},
		{"configured host:80 refuses other port", "plain:8080", nil, nil, configured, false},
		{"dangling-colon entry is any-port", "dangling:9", nil, nil, configured, true},
		{"punycode entry", "xn--bcher-kva.example:1", nil, nil, configured, true},
		{"ipv6 entry", "[FE80:0::1]:7499", nil, nil, configured, true},
		{"ipv6 entry other port", "[fe80::1]:7500", nil, nil, configured, false},
		{"ip entry any port", "10.0.0.7:3", nil, nil, configured, true},
		{"ip entry via integer refused: written form", "167772167:3", nil, nil, configured, false},
		{"trusted Host with userinfo refused: written form", "x@lan-box", nil, nil, configured, false},
		// Sec-Fetch-Site is compared exactly, each value on its own.
		{"cross-site", "127.0.0.1:7499", nil, []string{"cross-site"}, nil, false},
		{"same-site", "127.0.0.1:7499", nil, []string{"same-site"}, nil, true},
		{"none", "127.0.0.1:7499", nil, []string{"none"}, nil, true},
		{"any cross-site value refuses", "127.0.0.1:7499", nil, []string{"same-origin", "cross-site"}, nil, false},
		{"empty Sec-Fetch-Site", "127.0.0.1:7499", nil, []string{""}, nil, true},
		// Origin: an http(s)/ws(s) origin whose host and port equal the
		// Host's, whatever the scheme.
		{"foreign origin", "127.0.0.1:7499", []string{"http://evil.example"}, nil, nil, false},
		{"origin other port", "127.0.0.1:7499", []string{"http://127.0.0.1:9999"}, nil, nil, false},
		{"null origin", "127.0.0.1:7499", []string{"null"}, nil, nil, false},
		{"empty origin", "127.0.0.1:7499", []string{""}, nil, nil, false},
		{"two origins are joined", "127.0.0.1:7499", []string{"http://127.0.0.1:7499", "http://127.0.0.1:7499"}, nil, nil, false},
		{"origin scheme is ignored", "127.0.0.1:7499", []string{"https://127.0.0.1:7499"}, nil, nil, true},
		{"https origin default port", "localhost", []string{"https://localhost:443"}, nil, nil, true},
		{"https origin port 80", "localhost", []string{"https://localhost:80"}, nil, nil, false},
		{"ws origin", "localhost:7499", []string{"ws://localhost:7499"}, nil, nil, true},
		{"uppercase origin", "localhost:7499", []string{"HTTP://LOCALHOST:7499"}, nil, nil, true},
		{"origin 127.1 refused: written form", "127.0.0.1:7499", []string{"http://127.1:7499"}, nil, nil, false},
		{"host 127.1 origin 127.0.0.1 refused: written form", "127.1:7499", []string{"http://127.0.0.1:7499"}, nil, nil, false},
		{"origin without slashes refused: written form", "localhost:7499", []string{"http:localhost:7499"}, nil, nil, false},
		{"origin with userinfo path query refused: written form", "localhost:7499", []string{"http://u:p@localhost:7499/x?y#z"}, nil, nil, false},
		{"origin ipv6", "[::1]:7499", []string{"http://[0::1]:7499"}, nil, nil, true},
		{"origin other scheme refused: written form", "localhost:7499", []string{"foo://localhost:7499"}, nil, nil, false},
		{"origin other scheme, other case", "localhost:7499", []string{"foo://LOCALHOST:7499"}, nil, nil, false},
		{"origin other scheme, port 80", "localhost", []string{"foo://localhost:80"}, nil, nil, false},
		{"origin file host refused: written form", "127.0.0.1", []string{"file://127.0.0.1/x"}, nil, nil, false},
		{"origin file localhost is empty", "localhost", []string{"file://localhost/x"}, nil, nil, false},
		{"origin opaque path", "localhost", []string{"data:localhost"}, nil, nil, false},
		{"origin relative", "localhost:7499", []string{"//localhost:7499"}, nil, nil, false},
		{"origin bad port", "localhost:7499", []string{"http://localhost:99999"}, nil, nil, false},
		{"origin tab refused: written form", "localhost:7499", []string{"http://local\thost:7499"}, nil, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHandler(newFakeBackend(), Options{TrustedHosts: tc.trustedHosts})
			t.Cleanup(h.Close)
			for _, path := range []string{"/api/session.list", "/events"} {
				method := http.MethodPost
				if path == "/events" {
					method = http.MethodHead // never a stream: allowed requests fall through to 404
				}
				rec := serveTrust(h, method, path, tc.host, tc.origin, tc.site)
				if tc.allowed {
					require.NotEqual(t, http.StatusForbidden, rec.Code, path)
				} else {
					require.Equal(t, http.StatusForbidden, rec.Code, path)
					require.Equal(t, "forbidden", rec.Body.String())
				}
			}
		})
	}
}

// TestTrustFenceRefusesNonASCIIHosts: a host name is ASCII letters,
// digits, '-', '_' and '.'; full-width or percent-encoded letters are not
// localhost. Go's server already answers 400 to raw non-ASCII Host bytes.
func TestTrustFenceRefusesNonASCIIHosts(t *testing.T) {
	h := newTestHandler(t, newFakeBackend())
	for _, host := range []string{"ｌｏｃａｌｈｏｓｔ", "%EF%BD%8Cocalhost", "b%C3%BCcher.example"} {
		rec := serveTrust(h, http.MethodPost, "/api/session.list", host, nil, nil)
		require.Equal(t, http.StatusForbidden, rec.Code, host)
	}
}

func serveTrust(h http.Handler, method, path, host string, origin, site []string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(`{"type":"client-request","rpcId":"r","method":"session.list","payload":{}}`))
	req.Host, req.RemoteAddr = host, "127.0.0.1:50000"
	req.Header.Set("Content-Type", "application/json")
	for _, v := range origin {
		req.Header.Add("Origin", v)
	}
	for _, v := range site {
		req.Header.Add("Sec-Fetch-Site", v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// FuzzParseAuthority: reading a Host never panics, and what it accepts is
// canonical: reading its own rendering gives the same authority.
func FuzzParseAuthority(f *testing.F) {
	for _, seed := range []string{"localhost:7499", "[::1]:80", "127.0.0.1", "LAN-box:", "[0:0::1]:007499", "::1", "a@b", "%6C"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, hostport string) {
		a, ok := parseAuthority("http", hostport)
		if !ok {
			return
		}
		rendered := a.hostname
		if a.addr.Is6() {
			rendered = "[" + rendered + "]"
		}
		if a.port != "" {
			rendered += ":" + a.port
		}
		again, ok := parseAuthority("http", rendered)
		require.True(t, ok, rendered)
		require.Equal(t, a.hostname, again.hostname)
		require.Equal(t, a.port, again.port)
	})
}

// serveFrom is serveTrust from the peer address peer, with extra headers.
func serveFrom(h http.Handler, method, path, host, peer string, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(`{"type":"client-request","rpcId":"r","method":"session.list","payload":{}}`))
	req.Host, req.RemoteAddr = host, peer
	req.Header.Set("Content-Type", "application/json")
	for name, values := range header {
		req.Header[name] = values
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestTrustFenceWantsALoopbackPeerForALoopbackHost: a peer on another
// machine that writes Host: 127.0.0.1 is not this machine's browser; a
// Host the operator trusts is let in from anywhere.
func TestTrustFenceWantsALoopbackPeerForALoopbackHost(t *testing.T) {
	cases := []struct {
		name, host, peer string
		allowed          bool
	}{
		{"loopback peer", "127.0.0.1:7499", "127.0.0.1:50000", true},
		{"ipv6 loopback peer", "localhost:7499", "[::1]:50000", true},
		{"ipv4-mapped loopback peer", "localhost:7499", "[::ffff:127.0.0.1]:50000", true},
		{"remote peer claiming 127.0.0.1", "127.0.0.1:7499", "192.0.2.1:50000", false},
		{"remote peer claiming localhost", "localhost:7499", "10.0.0.9:50000", false},
		{"remote peer claiming [::1]", "[::1]:7499", "[2001:db8::1]:50000", false},
		{"unreadable peer", "127.0.0.1:7499", "", false},
		{"remote peer, trusted Host", "lan-box:7499", "192.0.2.1:50000", true},
	}
	h := newHandler(newFakeBackend(), Options{TrustedHosts: []string{"lan-box"}})
	t.Cleanup(h.Close)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/api/session.list", "/events"} {
				method := http.MethodPost
				if path == "/events" {
					method = http.MethodHead
				}
				rec := serveFrom(h, method, path, tc.host, tc.peer, nil)
				if tc.allowed {
					require.NotEqual(t, http.StatusForbidden, rec.Code, path)
				} else {
					require.Equal(t, http.StatusForbidden, rec.Code, path)
				}
			}
		})
	}
}

// TestBearerTokenFence: with a token, a peer on another machine must
// bring it (401 without it or with another); with it, any well-formed
// Host is let in, still never a cross-site request. A loopback peer may
// leave it out, but a wrong one is refused.
func TestBearerTokenFence(t *testing.T) {
	const remote, local = "192.0.2.1:50000", "127.0.0.1:50000"
	bearer := func(v string) http.Header { return http.Header{"Authorization": {v}} }
	cases := []struct {
		name, host, peer string
		header           http.Header
		want             int // 0: let in
	}{
		{"remote without token", "dsh.lan:7410", remote, nil, http.StatusUnauthorized},
		{"remote claiming loopback without token", "127.0.0.1:7410", remote, nil, http.StatusUnauthorized},
		{"remote with the token", "dsh.lan:7410", remote, bearer("Bearer s3cret-token"), 0},
		{"scheme in any case", "dsh.lan:7410", remote, bearer("bearer s3cret-token"), 0},
		{"remote with another token", "dsh.lan:7410", remote, bearer("Bearer s3cret-tokeN"), http.StatusUnauthorized},
		{"a prefix of the token", "dsh.lan:7410", remote, bearer("Bearer s3cret"), http.StatusUnauthorized},
		{"basic scheme", "dsh.lan:7410", remote, bearer("Basic czNjcmV0LXRva2Vu"), http.StatusUnauthorized},
		{"two Authorization headers", "dsh.lan:7410", remote, http.Header{"Authorization": {"Bearer s3cret-token", "Bearer s3cret-token"}}, http.StatusUnauthorized},
		{"token, foreign origin", "dsh.lan:7410", remote, http.Header{"Authorization": {"Bearer s3cret-token"}, "Origin": {"http://evil.example"}}, http.StatusForbidden},
		{"token, cross-site", "dsh.lan:7410", remote, http.Header{"Authorization": {"Bearer s3cret-token"}, "Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
		{"token, malformed Host", "dsh.lan:7410/x", remote, bearer("Bearer s3cret-token"), http.StatusForbidden},
		{"token, same origin", "dsh.lan:7410", remote, http.Header{"Authorization": {"Bearer s3cret-token"}, "Origin": {"http://dsh.lan:7410"}}, 0},
		{"loopback without token", "127.0.0.1:7410", local, nil, 0},
		{"loopback with a wrong token", "127.0.0.1:7410", local, bearer("Bearer nope"), http.StatusUnauthorized},
		{"loopback without token, foreign Host", "dsh.lan:7410", local, nil, http.StatusForbidden},
	}
	h := newHandler(newFakeBackend(), Options{Token: "s3cret-token"})
	t.Cleanup(h.Close)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/api/session.list", "/events"} {
				method := http.MethodPost
				if path == "/events" {
					method = http.MethodHead
				}
				rec := serveFrom(h, method, path, tc.host, tc.peer, tc.header)
				switch tc.want {
				case 0:
					require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, rec.Code, path)
				case http.StatusUnauthorized:
					require.Equal(t, http.StatusUnauthorized, rec.Code, path)
					require.Equal(t, "unauthorized", rec.Body.String())
					require.Equal(t, `Bearer realm="dsh-actors"`, rec.Header().Get("WWW-Authenticate"))
				default:
					require.Equal(t, tc.want, rec.Code, path)
				}
			}
		})
	}
	// The page itself is no secret: it loads without the token.
	rec := serveFrom(h, http.MethodGet, "/", "dsh.lan:7410", remote, nil)
	require.Equal(t, http.StatusOK, rec.Code)
}
