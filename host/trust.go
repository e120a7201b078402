package host

import (
	"crypto/subtle"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// verdict is the fence's answer to one request.
type verdict int

const (
	letIn        verdict = iota
	forbidden            // 403: not this machine's browser, or a cross-site request
	unauthorized         // 401: the bearer token is missing or wrong
)

// admit applies the fence in front of /api and /events.
//
// With a token, a request that carries an Authorization header must carry
// exactly "Bearer <token>" (the scheme in any case), else it is
// unauthorized; once it does, any well-formed Host is accepted, since no
// rebinding page can know the token, and only the cross-site checks of
// sameOrigin apply. A request without one is unauthorized unless its peer
// is loopback, and then passes the browser-trust fence of trusted.
// Without a token, Authorization is ignored and every request passes
// trusted.
func admit(r *http.Request, token string, trustedHosts []string) verdict {
	if token != "" {
		values := r.Header.Values("Authorization")
		switch {
		case len(values) > 1 || len(values) == 1 && !bearerMatches(values[0], token):
			return unauthorized
		case len(values) == 1:
			if _, ok := parseAuthority("http", r.Host); !ok || !sameOrigin(r, r.Host) {
				return forbidden
			}
			return letIn
		case !loopbackPeer(r):
			return unauthorized
		}
	}
	if !trusted(r, trustedHosts) {
		return forbidden
	}
	return letIn
}

// bearerMatches reports whether value is "Bearer <token>", the scheme
// compared without case and the token in constant time.
func bearerMatches(value, token string) bool {
	scheme, credentials, ok := strings.Cut(value, " ")
	return ok && strings.EqualFold(scheme, "Bearer") &&
		subtle.ConstantTimeCompare([]byte(credentials), []byte(token)) == 1
}

// loopbackPeer reports whether the request came from this machine: its
// RemoteAddr is a loopback address (an IPv4-mapped one counts). An
// unreadable RemoteAddr is not loopback.
func loopbackPeer(r *http.Request) bool {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && peer.Addr().Unmap().IsLoopback()
}

// trusted applies the browser-trust fence. It guards a server meant for
// this machine's browser against DNS rebinding and cross-site requests:
//
//   - the Host header must be exactly an authority (host, optionally
//     ":port"; no userinfo, path or escapes) whose host matches a
//     trustedHosts entry (see matchesTrustedHost) or is loopback
//     (localhost, 127.0.0.0/8, [::1]) while the peer is loopback too: a
//     peer on another machine writing Host: 127.0.0.1 is not let in;
//   - then sameOrigin must hold.
//
// Host names compare case-insensitively, IP addresses in their canonical
// form ([0:0::1] is [::1]), ports without leading zeros.
func trusted(r *http.Request, trustedHosts []string) bool {
	host, ok := parseAuthority("http", r.Host)
	if !ok || !(host.isLoopback() && loopbackPeer(r) || matchesTrustedHost(host, trustedHosts)) {
		return false
	}
	return sameOrigin(r, r.Host)
}

// sameOrigin holds when the request is no cross-site one: no
// Sec-Fetch-Site header is "cross-site", and an Origin header, when
// present, is one http, https, ws or wss origin (scheme://host[:port],
// nothing else: "null" and "" are refused) whose host and port equal
// hostport's, a port equal to its scheme's default counting as absent.
func sameOrigin(r *http.Request, hostport string) bool {
	if slices.Contains(r.Header.Values("Sec-Fetch-Site"), "cross-site") {
		return false
	}
	origins := r.Header.Values("Origin")
	switch len(origins) {
	case 0:
		return true
	case 1:
		host, _ := parseAuthority("http", hostport)
		origin, ok := parseOrigin(origins[0])
		return ok && origin.hostname == host.hostname && origin.port == host.port
	default:
		return false
	}
}

// authority is a host and port in the form the fence compares.
type authority struct {
	hostname string // lower-case name, or an IP address in canonical form
	addr     netip.Addr
	port     string // decimal, "" when absent or the scheme's default
	// portWritten is whether digits followed the colon, even the default
	// port.
	portWritten bool
}

// defaultPorts are the schemes an Origin may have, with their default
// ports.
var defaultPorts = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443"}

// parseAuthority reads hostport, which must be nothing but "host" or
// "host:port" (an IPv6 address in brackets, without a zone), for a URL of
// scheme.
func parseAuthority(scheme, hostport string) (authority, bool) {
	u, err := url.Parse(scheme + "://" + hostport)
	if err != nil || u.Host != hostport || u.User != nil {
		return authority{}, false
	}
	a := authority{hostname: strings.ToLower(u.Hostname())}
	bracketed := strings.HasPrefix(hostport, "[")
	if addr, err := netip.ParseAddr(a.hostname); err == nil {
		if addr.Zone() != "" || bracketed != addr.Is6() {
			return authority{}, false // IPv6 needs brackets, nothing else has them
		}
		a.addr, a.hostname = addr, addr.String()
	} else if bracketed || !isHostName(a.hostname) {
		return authority{}, false
	}
	if port := u.Port(); port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return authority{}, false
		}
		a.portWritten = true
		if a.port = strconv.FormatUint(n, 10); a.port == defaultPorts[scheme] {
			a.port = ""
		}
	}
	return a, true
}

// parseOrigin reads an Origin header value: scheme://host[:port] with an
// http, https, ws or wss scheme and nothing after the authority.
func parseOrigin(value string) (authority, bool) {
	u, err := url.Parse(value)
	if err != nil || u.Opaque != "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return authority{}, false
	}
	if _, ok := defaultPorts[u.Scheme]; !ok {
		return authority{}, false
	}
	return parseAuthority(u.Scheme, u.Host)
}

// isLoopback reports whether the host is localhost, an IPv4 address in
// 127.0.0.0/8 or the IPv6 loopback address (not an IPv4-mapped one).
func (a authority) isLoopback() bool {
	if a.hostname == "localhost" {
		return true
	}
	return (a.addr.Is4() && a.addr.IsLoopback()) || a.addr == netip.IPv6Loopback()
}

// matchesTrustedHost reports whether host matches an entry of
// trustedHosts, each read like a Host header (an unreadable entry matches
// nothing): an entry with a port (even the default, so "plain:80" matches
// "plain" and "plain:80") matches that host and port; one without a port,
// or with a bare colon, matches its host on any port.
func matchesTrustedHost(host authority, trustedHosts []string) bool {
	for _, text := range trustedHosts {
		entry, ok := parseAuthority("http", text)
		if ok && entry.hostname == host.hostname && (!entry.portWritten || entry.port == host.port) {
			return true
		}
	}
	return false
}

// isHostName reports whether name is a non-empty run of ASCII letters,
// digits, '-', '_' and '.', the characters of DNS names and the
// hostnames people give machines.
func isHostName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
