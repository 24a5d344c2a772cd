package router

import (
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/propagation"
)

// Which headers cross the gateway, each way.

// Request headers passed upstream. Everything else stays behind: above all
// the client's own Authorization and x-api-key, which are for the gateway.
var forwardedRequestHeaders = []string{
	"Accept", "User-Agent", "Anthropic-Version", "Anthropic-Beta", "Openai-Beta", "X-Stainless-Lang",
}

// copyRequestHeaders puts the client's headers an upstream may use on dst;
// sameFormat is false when the request was translated, and then the
// client API's own headers (anthropic-*, openai-*) stay behind.
func copyRequestHeaders(dst, src http.Header, sameFormat bool) {
	dst["Content-Type"] = []string{"application/json"}
	conn := src["Connection"]
	for _, k := range forwardedRequestHeaders {
		if !sameFormat && (strings.HasPrefix(k, "Anthropic-") || strings.HasPrefix(k, "Openai-")) {
			continue
		}
		if v, ok := src[k]; ok && !listedIn(conn, k) {
			dst[k] = v
		}
	}
}

// hopHeaders are per-connection and never relayed (RFC 9110 section 7.6.1),
// with the Proxy-Connection some clients still send.
var hopHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "Proxy-Connection": true,
}

// accountHeaders identify the operator's provider account or set its
// cookies; a gateway client has no business seeing them.
var accountHeaders = map[string]bool{
	"Set-Cookie": true, "Openai-Organization": true, "Openai-Project": true, "Anthropic-Organization-Id": true,
}

// copyResponseHeaders relays an upstream answer's headers but the
// per-connection ones (those above, and any the answer's Connection header
// names), the account ones, any whose value contains the provider's key
// (an upstream that echoes a credential must not hand it to a client), and
// Content-Length when dropLength (a stream's length is the gateway's own).
func copyResponseHeaders(dst, src http.Header, dropLength bool, secret string) {
	conn := src["Connection"]
	for k, v := range src {
		if hopHeaders[k] || accountHeaders[k] || (dropLength && k == "Content-Length") || listedIn(conn, k) {
			continue
		}
		if secret != "" && containsSecret(v, secret) {
			continue
		}
		dst[k] = v
	}
}

// listedIn reports whether the canonical header name k is among the
// comma-separated tokens of a Connection header's values. Header names are
// case-insensitive, so a case-insensitive comparison says what
// canonicalizing each token would, without allocating a canonical copy per
// token and header.
func listedIn(connection []string, k string) bool {
	for _, v := range connection {
		for tok := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), k) {
				return true
			}
		}
	}
	return false
}

func containsSecret(values []string, secret string) bool {
	for _, v := range values {
		if strings.Contains(v, secret) {
			return true
		}
	}
	return false
}

// setGatewayHeaders puts the routing decision on a response: the route's
// attempts, selection and skips, and target, the target of the last
// attempt ("": none).
func setGatewayHeaders(h http.Header, r *Route, target string) {
	if target != "" {
		h[HeaderTarget] = []string{target}
	}
	h[HeaderAttempts] = []string{strconv.Itoa(r.Attempts())}
	h[HeaderSelection] = []string{r.Selection()}
	if r.hedge == HedgeWon || r.hedge == HedgeLost {
		h[HeaderHedged] = []string{r.hedge}
	}
	if skipped := r.Skipped(); len(skipped) > 0 {
		names := make([]string, len(skipped))
		for i, s := range skipped {
			names[i] = s.Target
		}
		h[HeaderSkipped] = []string{strings.Join(names, ",")}
	}
}

// headerCarrier is propagation.HeaderCarrier that reads and writes the
// trace-context headers under their canonical names directly: the W3C
// propagators ask for "traceparent" and "tracestate" in lower case, which
// http.Header canonicalises (and allocates a copy of) on every call.
type headerCarrier http.Header

// carrierKeys are the propagators' keys in canonical form.
var carrierKeys = map[string]string{"traceparent": "Traceparent", "tracestate": "Tracestate", "baggage": "Baggage"}

func (c headerCarrier) Get(key string) string {
	if ck, ok := carrierKeys[key]; ok {
		return headerValue(http.Header(c), ck)
	}
	return http.Header(c).Get(key)
}

func (c headerCarrier) Set(key, value string) {
	if ck, ok := carrierKeys[key]; ok {
		c[ck] = []string{value}
		return
	}
	http.Header(c).Set(key, value)
}

func (c headerCarrier) Keys() []string { return propagation.HeaderCarrier(c).Keys() }
