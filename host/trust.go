package host

import (
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// trusted applies the browser-trust fence in front of /api (web-host §1.1).
// It is the original's isTrustedApiRequest
// (client/connection/src/api-request-trust.ts), which compares authorities
// the way a browser's URL parser (WHATWG URL) reads them:
//
//   - the Host header, parsed as new URL("http://" + host), must have a
//     loopback hostname (localhost, [::1], 127.x.y.z — after normalization,
//     so 127.1, 0x7f.1 and 2130706433 are 127.0.0.1) or match a trusted
//     entry (see isTrustedAuthority); an unparsable Host (::1 unbracketed,
//     a port over 65535, a forbidden code point) is refused;
//   - Sec-Fetch-Site exactly "cross-site" (case-sensitive, repeated headers
//     joined with ", " as node does) is refused;
//   - an Origin, when present (even empty), must parse as a URL whose host
//     (hostname plus a non-default port, whatever the scheme) equals the
//     Host's: "null" and "" do not parse and are refused.
func trusted(r *http.Request, trustedHosts []string) bool {
	hostURL, ok := parseURL("http://" + r.Host)
	if !ok {
		return false
	}
	if !isLoopbackHostname(hostURL.hostname) && !isTrustedAuthority(hostURL, trustedHosts) {
		return false
	}
	if site, ok := nodeHeader(r, "Sec-Fetch-Site"); ok && site == "cross-site" {
		return false
	}
	origin, ok := nodeHeader(r, "Origin")
	if !ok {
		return true
	}
	originURL, ok := parseURL(origin)
	return ok && originURL.host() == hostURL.host()
}

// nodeHeader is a header as node's IncomingMessage.headers holds it:
// repeated values joined with ", "; ok is false when it is absent.
func nodeHeader(r *http.Request, name string) (string, bool) {
	values := r.Header.Values(name)
	return strings.Join(values, ", "), len(values) > 0
}

// isLoopbackHostname is the original's: localhost, [::1], or four decimal
// parts of at most three digits, each ≤ 255, the first 127.
func isLoopbackHostname(hostname string) bool {
	if hostname == "localhost" || hostname == "[::1]" {
		return true
	}
	parts := strings.Split(hostname, ".")
	if len(parts) != 4 || parts[0] != "127" {
		return false
	}
	for _, part := range parts {
		n, err := strconv.Atoi(part)
		if len(part) < 1 || len(part) > 3 || !isDigits(part) || err != nil || n > 255 {
			return false
		}
	}
	return true
}

// isTrustedAuthority reports whether the Host matches a trusted entry, each
// parsed like the Host (an unparsable entry matches nothing): an entry with
// a written port (even :80) matches that exact authority after
// normalization ("plain:80" matches Host "plain" and "plain:80"); a
// port-less entry, or one with a dangling colon, matches its hostname on
// any port.
func isTrustedAuthority(hostURL parsedURL, trustedHosts []string) bool {
	for _, entry := range trustedHosts {
		entryURL, ok := parseURL("http://" + entry)
		switch {
		case !ok:
		case !entryURL.portWritten:
			if entryURL.hostname == hostURL.hostname {
				return true
			}
		case entryURL.host() == hostURL.host():
			return true
		}
	}
	return false
}

// parsedURL is the part of a WHATWG URL record the fence compares.
type parsedURL struct {
	hostname    string // serialized host, "" when null
	port        string // "" when absent or the scheme's default
	portWritten bool   // digits followed the colon, even the default port
}

// host is URL.host: the hostname, then ":" and the port unless it is absent
// or the scheme's default.
func (u parsedURL) host() string {
	if u.port == "" {
		return u.hostname
	}
	return u.hostname + ":" + u.port
}

// specialSchemes maps the WHATWG special schemes to their default port
// ("" for file, which has none).
var specialSchemes = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21", "file": ""}

// parseURL runs the WHATWG basic URL parser (no base URL) as far as the
// host and port, which is all the fence reads; ok is false where the
// parser returns failure. The rest (path, query, fragment) cannot fail.
// Limitation: a special-scheme host that is not ASCII after
// percent-decoding needs UTS 46 tables this package does not carry and is
// treated as a failure (refused), and a punycode ("xn--") label is only
// checked to decode.
func parseURL(input string) (parsedURL, bool) {
	input = strings.TrimFunc(input, func(r rune) bool { return r <= ' ' })
	input = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, input)
	colon := strings.IndexByte(input, ':')
	if colon < 1 || !isSchemeStart(input[0]) || strings.IndexFunc(input[:colon], notSchemeRune) >= 0 {
		return parsedURL{}, false // no scheme, and no base URL to resolve against
	}
	scheme, rest := strings.ToLower(input[:colon]), input[colon+1:]
	defaultPort, special := specialSchemes[scheme]
	switch {
	case scheme == "file":
		return parseFileHost(rest)
	case special:
		// special authority (ignore) slashes: any run of / and \ is skipped.
		rest = strings.TrimLeft(rest, `/\`)
	case strings.HasPrefix(rest, "//"):
		rest = rest[2:]
	default: // a path or an opaque path: the host is null
		return parsedURL{}, true
	}
	terminators := "/?#"
	if special {
		terminators += `\`
	}
	authority := rest
	if end := strings.IndexAny(rest, terminators); end >= 0 {
		authority = rest[:end]
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:] // the userinfo is not compared
		if authority == "" {
			return parsedURL{}, false
		}
	}
	hostText, portText, hasColon := cutHostPort(authority)
	if hostText == "" && (hasColon || special) {
		return parsedURL{}, false
	}
	var u parsedURL
	var ok bool
	if u.hostname, ok = parseHost(hostText, special); !ok {
		return parsedURL{}, false
	}
	if portText != "" {
		if !isDigits(portText) {
			return parsedURL{}, false
		}
		trimmed := strings.TrimLeft(portText, "0")
		if len(trimmed) > 5 {
			return parsedURL{}, false
		}
		n, _ := strconv.Atoi("0" + trimmed)
		if n > 65535 {
			return parsedURL{}, false
		}
		u.portWritten = true
		if port := strconv.Itoa(n); port != defaultPort {
			u.port = port
		}
	}
	return u, true
}

// cutHostPort splits an authority at its first colon outside brackets.
func cutHostPort(authority string) (host, port string, hasColon bool) {
	inside := false
	for i := 0; i < len(authority); i++ {
		switch authority[i] {
		case '[':
			inside = true
		case ']':
			inside = false
		case ':':
			if !inside {
				return authority[:i], authority[i+1:], true
			}
		}
	}
	return authority, "", false
}

// parseFileHost reads the host of a file: URL's rest: it is empty unless
// two slashes (either kind) introduce a host that is not a Windows drive
// letter, and localhost is empty too. A file URL has no port.
func parseFileHost(rest string) (parsedURL, bool) {
	if len(rest) < 2 || !isSlash(rest[0]) || !isSlash(rest[1]) {
		return parsedURL{}, true
	}
	rest = rest[2:]
	if end := strings.IndexAny(rest, `/\?#`); end >= 0 {
		rest = rest[:end]
	}
	if rest == "" || (len(rest) == 2 && isASCIIAlpha(rest[0]) && (rest[1] == ':' || rest[1] == '|')) {
		return parsedURL{}, true
	}
	host, ok := parseHost(rest, true)
	if host == "localhost" {
		host = ""
	}
	return parsedURL{hostname: host}, ok
}

// parseHost is the WHATWG host parser, returning the serialized host.
func parseHost(input string, special bool) (string, bool) {
	if strings.HasPrefix(input, "[") {
		if !strings.HasSuffix(input, "]") {
			return "", false
		}
		address, ok := parseIPv6(input[1 : len(input)-1])
		if !ok {
			return "", false
		}
		return "[" + serializeIPv6(address) + "]", true
	}
	if !special {
		return parseOpaqueHost(input)
	}
	domain := percentDecode(input)
	for i := 0; i < len(domain); i++ {
		if domain[i] >= utf8.RuneSelf {
			return "", false // UTS 46 mapping is out of reach (see parseURL)
		}
	}
	ascii, ok := domainToASCII(domain)
	if !ok || ascii == "" || strings.ContainsFunc(ascii, isForbiddenDomainRune) {
		return "", false
	}
	if endsInANumber(ascii) {
		address, ok := parseIPv4(ascii)
		if !ok {
			return "", false
		}
		return serializeIPv4(address), true
	}
	return ascii, true
}

// parseOpaqueHost is the host of a non-special URL: refused when it holds a
// forbidden host code point, otherwise kept as written (case included)
// with C0 controls and non-ASCII percent-encoded.
func parseOpaqueHost(input string) (string, bool) {
	if strings.ContainsFunc(input, isForbiddenHostRune) {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(input); i++ {
		if c := input[i]; c < 0x20 || c > 0x7E {
			b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)>>4, 16)+strconv.FormatUint(uint64(c)&15, 16)))
		} else {
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// domainToASCII is UTS 46 ToASCII for an ASCII domain as the URL standard
// calls it (no STD3 rules, no DNS length check): ASCII lowercasing, and
// every "xn--" label must hold decodable punycode.
func domainToASCII(domain string) (string, bool) {
	domain = strings.ToLower(domain)
	for label := range strings.SplitSeq(domain, ".") {
		if encoded, ok := strings.CutPrefix(label, "xn--"); ok && !isPunycodeLabel(encoded) {
			return "", false
		}
	}
	return domain, true
}

// isPunycodeLabel reports whether encoded (the label after "xn--") decodes
// (RFC 3492) to a label UTS 46 could accept: non-empty, not starting with a
// combining mark or "xn--", no dot, printable and not uppercase code points.
// The rest of UTS 46 validity (mapped code points, NFC, the bidi and joiner
// rules) needs tables this package does not carry.
func isPunycodeLabel(encoded string) bool {
	const base, tMin, tMax, skew, damp = 36, 1, 26, 38, 700
	var output []rune
	basic := ""
	if d := strings.LastIndexByte(encoded, '-'); d >= 0 {
		basic, encoded = encoded[:d], encoded[d+1:]
		if basic == "" && encoded == "" {
			return false
		}
	}
	for _, c := range []byte(basic) {
		output = append(output, rune(c))
	}
	n, bias, i := 128, 72, 0
	for pos := 0; pos < len(encoded); {
		oldi, w := i, 1
		for k := base; ; k += base {
			if pos >= len(encoded) {
				return false
			}
			digit := punycodeDigit(encoded[pos])
			pos++
			if digit < 0 || digit > (1<<31-1-i)/w {
				return false
			}
			i += digit * w
			t := k - bias
			if t < tMin {
				t = tMin
			} else if t > tMax {
				t = tMax
			}
			if digit < t {
				break
			}
			if w > (1<<31-1)/(base-t) {
				return false
			}
			w *= base - t
		}
		count := len(output) + 1
		delta := i - oldi
		if oldi == 0 {
			delta /= damp
		} else {
			delta /= 2
		}
		delta += delta / count
		k := 0
		for delta > ((base-tMin)*tMax)/2 {
			delta /= base - tMin
			k += base
		}
		bias = k + (base-tMin+1)*delta/(delta+skew)
		if i/count > unicode.MaxRune-n {
			return false
		}
		n += i / count
		i %= count
		output = append(output[:i], append([]rune{rune(n)}, output[i:]...)...)
		i++
	}
	if len(output) == 0 || unicode.Is(unicode.M, output[0]) || strings.HasPrefix(string(output), "xn--") {
		return false
	}
	for _, r := range output {
		if !utf8.ValidRune(r) || !unicode.IsPrint(r) || unicode.IsUpper(r) || r == '.' {
			return false
		}
	}
	return true
}

func punycodeDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c-'0') + 26
	case 'a' <= c && c <= 'z':
		return int(c - 'a')
	case 'A' <= c && c <= 'Z':
		return int(c - 'A')
	}
	return -1
}

// endsInANumber is the URL standard's ends-in-a-number checker: the last
// label (ignoring one trailing dot) is all digits or 0x-hex.
func endsInANumber(domain string) bool {
	parts := strings.Split(domain, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && isDigits(last) {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4 is the URL standard's IPv4 parser (1 to 4 parts, each decimal,
// 0x-hex or 0-octal; the last fills the remaining bytes).
func parseIPv4(input string) (uint32, bool) {
	parts := strings.Split(input, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return 0, false
	}
	numbers := make([]uint64, len(parts))
	for i, part := range parts {
		n, ok := parseIPv4Number(part)
		if !ok || (i < len(parts)-1 && n > 255) {
			return 0, false
		}
		numbers[i] = n
	}
	last := numbers[len(numbers)-1]
	if last >= 1<<(8*(5-len(numbers))) {
		return 0, false
	}
	address := last
	for i, n := range numbers[:len(numbers)-1] {
		address += n << (8 * (3 - i))
	}
	return uint32(address), true
}

// parseIPv4Number parses one IPv4 part; values saturate above 2^32, which
// the caller refuses anyway.
func parseIPv4Number(input string) (uint64, bool) {
	if input == "" {
		return 0, false
	}
	radix := uint64(10)
	if len(input) >= 2 && (input[:2] == "0x" || input[:2] == "0X") {
		input, radix = input[2:], 16
	} else if len(input) >= 2 && input[0] == '0' {
		input, radix = input[1:], 8
	}
	var n uint64
	for i := 0; i < len(input); i++ {
		d, err := strconv.ParseUint(input[i:i+1], 16, 8)
		if err != nil || d >= radix {
			return 0, false
		}
		n = min(n*radix+d, 1<<40)
	}
	return n, true
}

func serializeIPv4(address uint32) string {
	return strconv.Itoa(int(address>>24)) + "." + strconv.Itoa(int(address>>16&255)) + "." +
		strconv.Itoa(int(address>>8&255)) + "." + strconv.Itoa(int(address&255))
}

// parseIPv6 is the URL standard's IPv6 parser (no zone identifiers).
func parseIPv6(input string) ([8]uint16, bool) {
	var address [8]uint16
	pieceIndex, compress, p := 0, -1, 0
	at := func(i int) int { // the code point at i, or -1 past the end
		if i < len(input) {
			return int(input[i])
		}
		return -1
	}
	if at(p) == ':' {
		if at(p+1) != ':' {
			return address, false
		}
		p += 2
		pieceIndex++
		compress = pieceIndex
	}
	for at(p) != -1 {
		if pieceIndex == 8 {
			return address, false
		}
		if at(p) == ':' {
			if compress != -1 {
				return address, false
			}
			p++
			pieceIndex++
			compress = pieceIndex
			continue
		}
		value, length := 0, 0
		for length < 4 && hexValue(at(p)) >= 0 {
			value = value*16 + hexValue(at(p))
			p++
			length++
		}
		if at(p) == '.' {
			if length == 0 {
				return address, false
			}
			p -= length
			if pieceIndex > 6 {
				return address, false
			}
			numbersSeen := 0
			for at(p) != -1 {
				piece := -1
				if numbersSeen > 0 {
					if at(p) != '.' || numbersSeen >= 4 {
						return address, false
					}
					p++
				}
				if !isDigitCode(at(p)) {
					return address, false
				}
				for isDigitCode(at(p)) {
					digit := at(p) - '0'
					switch piece {
					case -1:
						piece = digit
					case 0:
						return address, false
					default:
						piece = piece*10 + digit
					}
					if piece > 255 {
						return address, false
					}
					p++
				}
				address[pieceIndex] = address[pieceIndex]*0x100 + uint16(piece)
				numbersSeen++
				if numbersSeen == 2 || numbersSeen == 4 {
					pieceIndex++
				}
			}
			if numbersSeen != 4 {
				return address, false
			}
			break
		} else if at(p) == ':' {
			p++
			if at(p) == -1 {
				return address, false
			}
		} else if at(p) != -1 {
			return address, false
		}
		address[pieceIndex] = uint16(value)
		pieceIndex++
	}
	if compress != -1 {
		swaps := pieceIndex - compress
		pieceIndex = 7
		for pieceIndex != 0 && swaps > 0 {
			address[pieceIndex], address[compress+swaps-1] = address[compress+swaps-1], address[pieceIndex]
			pieceIndex--
			swaps--
		}
	} else if pieceIndex != 8 {
		return address, false
	}
	return address, true
}

// serializeIPv6 writes lowercase hex pieces, the first longest run of two
// or more zero pieces compressed to "::".
func serializeIPv6(address [8]uint16) string {
	compress, best := -1, 1
	for i := 0; i < 8; {
		if address[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && address[j] == 0 {
			j++
		}
		if j-i > best {
			compress, best = i, j-i
		}
		i = j
	}
	var b strings.Builder
	for i := 0; i < 8; i++ {
		if i == compress {
			if i == 0 {
				b.WriteString("::")
			} else {
				b.WriteString(":")
			}
			i += best - 1
			continue
		}
		b.WriteString(strconv.FormatUint(uint64(address[i]), 16))
		if i != 7 {
			b.WriteString(":")
		}
	}
	return b.String()
}

// percentDecode decodes every %XX (two hex digits); other bytes, a lone %
// included, are kept.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && hexValue(int(s[i+1])) >= 0 && hexValue(int(s[i+2])) >= 0 {
			b.WriteByte(byte(hexValue(int(s[i+1]))<<4 | hexValue(int(s[i+2]))))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// isForbiddenHostRune: the URL standard's forbidden host code points.
func isForbiddenHostRune(r rune) bool {
	return strings.ContainsRune("\x00\t\n\r #/:<>?@[\\]^|", r)
}

// isForbiddenDomainRune: forbidden host code points, C0 controls, % and DEL.
func isForbiddenDomainRune(r rune) bool {
	return isForbiddenHostRune(r) || r <= 0x1F || r == '%' || r == 0x7F
}

func isSchemeStart(c byte) bool { return isASCIIAlpha(c) }

func notSchemeRune(r rune) bool {
	return !(r < utf8.RuneSelf && (isASCIIAlpha(byte(r)) || ('0' <= r && r <= '9') || r == '+' || r == '-' || r == '.'))
}

func isASCIIAlpha(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

func isSlash(c byte) bool { return c == '/' || c == '\\' }

func isDigitCode(c int) bool { return '0' <= c && c <= '9' }

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigitCode(int(s[i])) {
			return false
		}
	}
	return true
}

func hexValue(c int) int {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return -1
}
