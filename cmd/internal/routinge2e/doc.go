// Package routinge2e measures routing quality end to end: real HTTP
// upstreams (simulated providers on loopback), the real gateway in front of
// them, and closed-loop clients that judge routing only by what they can
// see — the time to the response headers, the status, and the gateway's
// X-Firstbyte-* headers — plus, on the upstream side, which provider each
// request reached first.
//
// It holds what both users of it share, so that the full-length driver
// (firstbyte-loadtest -routing) and the short tests in cmd/firstbyte run
// the same scenarios and measure them the same way: the scenarios and the
// gateway config they need, the oracle's order, the upstreams, the clients,
// and the figures computed from what the clients saw.
//
// It starts no gateway itself: its callers do (a child process in both
// cases). It must not listen on anything but loopback, nor run unbounded:
// every load has a duration and every request a deadline.
package routinge2e
