package config

import (
	"net"

	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// The address rules Validate applies to the two listeners: which pairs
// could not both bind, and which addresses only this machine can reach.

// listenersCollide reports whether two listeners on a and b could not both
// bind, and why: the same port (not 0, which picks a free one) on the same
// host, or on any host when one of them listens on every address.
func listenersCollide(a, b string) (why string, collide bool) {
	ha, pa, _ := net.SplitHostPort(a)
	hb, pb, _ := net.SplitHostPort(b)
	if pa != pb || pa == "0" {
		return "", false
	}
	ka, kb := hostClass(ha), hostClass(hb)
	switch {
	case a == b:
		return "the same address", true
	case ka == hostAll || kb == hostAll:
		return "the same port, and an empty host or :: listens on every address", true
	case ka == hostAllV4 && kb != hostV6, kb == hostAllV4 && ka != hostV6:
		// A host name is taken to resolve to IPv4, as nearly all do.
		return "the same port, and 0.0.0.0 listens on every IPv4 address", true
	case canonicalHost(ha) == canonicalHost(hb):
		return "the same port on the same host", true
	}
	return "", false
}

type hostKind int

const (
	hostName  hostKind = iota // a DNS name other than localhost
	hostV4                    // an IPv4 address, or localhost (Go binds it to 127.0.0.1)
	hostV6                    // an IPv6 address
	hostAllV4                 // 0.0.0.0
	hostAll                   // "" or ::, every address of both families
)

func hostClass(h string) hostKind {
	if h == "" {
		return hostAll
	}
	if h == "localhost" {
		return hostV4
	}
	ip := net.ParseIP(h)
	switch {
	case ip == nil:
		return hostName
	case ip.To4() != nil && ip.IsUnspecified():
		return hostAllV4
	case ip.IsUnspecified():
		return hostAll
	case ip.To4() != nil:
		return hostV4
	}
	return hostV6
}

// canonicalHost is the host a listener binds: telemetry.CanonicalHost's
// spelling (the one foreign spans are matched by), and localhost as the
// 127.0.0.1 Go binds it to, a rule of listeners, not of hosts in general.
func canonicalHost(h string) string {
	if h == "localhost" {
		return "127.0.0.1"
	}
	return telemetry.CanonicalHost(h)
}

// isLoopback reports whether a listener on addr is reachable only from
// this machine.
func isLoopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
