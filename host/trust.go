package host

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// trusted applies the browser-trust fence in front of /api (web-host §1.1):
// the Host header names a loopback or configured authority, the request is
// not cross-site, and an Origin, when present, is that same authority
// (the literal "null" origin is refused).
func trusted(r *http.Request, trustedHosts []string) bool {
	authority := strings.ToLower(r.Host)
	if !isLoopbackAuthority(authority) && !isConfiguredAuthority(authority, trustedHosts) {
		return false
	}
	if strings.EqualFold(r.Header.Get("Sec-Fetch-Site"), "cross-site") {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && origin != "null" && u.Host != "" && strings.EqualFold(u.Host, authority)
}

// isLoopbackAuthority accepts localhost, [::1] and 127.x.y.z, with any port.
func isLoopbackAuthority(authority string) bool {
	host := hostOf(authority)
	if host == "localhost" {
		return true
	}
	if strings.Contains(host, ":") {
		return host == "::1"
	}
	ip := net.ParseIP(host).To4()
	return ip != nil && ip[0] == 127
}

// isConfiguredAuthority matches an entry "host:port" exactly, or an entry
// "host" at any port.
func isConfiguredAuthority(authority string, trustedHosts []string) bool {
	for _, entry := range trustedHosts {
		entry = strings.ToLower(entry)
		if entry == authority || entry == hostOf(authority) {
			return true
		}
	}
	return false
}

// hostOf strips the port and IPv6 brackets from an authority.
func hostOf(authority string) string {
	if host, _, err := net.SplitHostPort(authority); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(authority, "["), "]")
}
