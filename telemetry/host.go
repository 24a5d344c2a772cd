package telemetry

import (
	"net/netip"
	"strings"
)

// CanonicalHost spells a host (server.address, a URL's host) one way,
// whoever wrote it, so two spellings of one host compare equal: an IP
// address in its canonical form (IPv6 compressed and lowercase, without the
// brackets the WHATWG URL parser of JavaScript instrumentations keeps; an
// IPv4-mapped IPv6 address as its IPv4 address), a name in lowercase.
// Nothing is resolved. A host already so spelled is returned as it is,
// without allocating.
func CanonicalHost(h string) string {
	if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
		h = h[1 : len(h)-1]
	}
	// Most hosts are names: they skip the parse, whose error allocates.
	if mayBeIP(h) {
		if ip, err := netip.ParseAddr(h); err == nil {
			var buf [64]byte // an IPv6 address (45 bytes at most) and a short zone fit
			b := ip.Unmap().AppendTo(buf[:0])
			if string(b) == h {
				return h
			}
			return string(b)
		}
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(h)
		}
	}
	return h
}

// mayBeIP reports whether h could be an IP address: it has a colon (IPv6),
// or is digits and dots only (IPv4).
func mayBeIP(h string) bool {
	if h == "" || strings.IndexByte(h, ':') >= 0 {
		return h != ""
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; c != '.' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
