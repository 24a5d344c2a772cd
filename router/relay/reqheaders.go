package relay

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/propagation"

	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

// Which headers cross the gateway, each way: a request's here, an
// answer's in respheaders.go.

// Request headers passed upstream. Everything else stays behind: above all
// the client's own Authorization and x-api-key, which are for the gateway.
var forwardedRequestHeaders = []string{
	"Accept", "User-Agent", "Anthropic-Version", "Anthropic-Beta", "Openai-Beta", "X-Stainless-Lang",
}

// CopyRequestHeaders puts the client's headers an upstream may use on dst;
// sameFormat is false when the request was translated, and then the
// client API's own headers (anthropic-*, openai-*) stay behind.
func CopyRequestHeaders(dst, src http.Header, sameFormat bool) {
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

// HeaderCarrier is propagation.HeaderCarrier that reads and writes the
// trace-context headers under their canonical names directly: the W3C
// propagators ask for "traceparent" and "tracestate" in lower case, which
// http.Header canonicalises (and allocates a copy of) on every call.
type HeaderCarrier http.Header

// carrierKeys are the propagators' keys in canonical form.
var carrierKeys = map[string]string{"traceparent": "Traceparent", "tracestate": "Tracestate", "baggage": "Baggage"}

func (c HeaderCarrier) Get(key string) string {
	if ck, ok := carrierKeys[key]; ok {
		return upstream.HeaderValue(http.Header(c), ck)
	}
	return http.Header(c).Get(key)
}

func (c HeaderCarrier) Set(key, value string) {
	if ck, ok := carrierKeys[key]; ok {
		c[ck] = []string{value}
		return
	}
	http.Header(c).Set(key, value)
}

func (c HeaderCarrier) Keys() []string { return propagation.HeaderCarrier(c).Keys() }
