package relay

import (
	"net/http"
	"strings"

	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

// Which of an upstream answer's headers reach the client: an allow-list,
// the same on every relay path (unary, stream, translated, an error handed
// back, the last failure of a request). Everything else the provider or
// the edge in front of it set stays behind: Server, Via, Alt-Svc and
// Strict-Transport-Security (which would then apply to the gateway's own
// address), cookies, organisation and project ids, CDN and mesh headers
// (Cf-Ray, X-Envoy-*), and any header the gateway does not know.
//
//	Content-Type, Content-Encoding, Content-Length   framing: the body is relayed as it came
//	Retry-After, Retry-After-Ms                      as the gateway read them (garbage: not relayed)
//	X-Ratelimit-*, Anthropic-Ratelimit-*             the provider's rate limits
//	the provider's request id                        as X-Firstbyte-Upstream-Request-Id

// HeaderUpstreamRequestID carries the provider's own id of the answer to
// the client, whatever the provider calls it (router.HeaderUpstreamRequestID).
const HeaderUpstreamRequestID = "X-Firstbyte-Upstream-Request-Id"

// upstreamRequestIDHeaders are the names providers give their id of an
// answer, in the order one is chosen when an answer carries several (an
// Azure answer has both apim-request-id and x-request-id: the first
// listed wins). Canonical spellings: they are read by map index.
var upstreamRequestIDHeaders = []string{
	"X-Request-Id",     // OpenAI and most OpenAI-compatible hosts (Azure OpenAI, Groq, Mistral, Together, ...)
	"Request-Id",       // Anthropic
	"Apim-Request-Id",  // Azure API Management, in front of Azure OpenAI
	"X-Ms-Request-Id",  // Azure
	"X-Amzn-Requestid", // AWS (Bedrock)
	"X-Goog-Request-Id",
}

// maxRequestIDLen bounds a relayed request id: ids are tens of
// characters; a longer value is not an id.
const maxRequestIDLen = 200

// CopyResponseHeaders puts on dst the headers of an upstream answer a
// client may see: the allow-list above, but a header the answer's
// Connection header names (per-connection), and Content-Length when
// dropLength (the gateway frames the body itself). A value that carries
// secret, the provider's key, as a whole token is scrubbed (an upstream
// that echoes a credential must not hand it to a client); framing headers
// are never scrubbed: an answer without its Content-Type is another answer.
func CopyResponseHeaders(dst, src http.Header, dropLength bool, secret string) {
	conn := src["Connection"]
	for k, v := range src {
		switch {
		case k == "Content-Type" || k == "Content-Encoding" || (k == "Content-Length" && !dropLength):
			dst[k] = v
			continue
		case k == "Retry-After" || k == "Retry-After-Ms":
			v = relayedDelay(k, v)
		case !strings.HasPrefix(k, "X-Ratelimit-") && !strings.HasPrefix(k, "Anthropic-Ratelimit-"):
			continue
		}
		if len(v) == 0 || listedIn(conn, k) || containsSecret(v, secret) {
			continue
		}
		dst[k] = v
	}
	if id := upstreamRequestID(src, secret); id != nil {
		dst[HeaderUpstreamRequestID] = id
	}
}

// relayedDelay is a Retry-After (or Retry-After-Ms) header's values as a
// client is given them: the first, as the gateway read it; nil when it read
// nothing. A value already canonical is relayed without an allocation.
func relayedDelay(k string, v []string) []string {
	if len(v) == 0 {
		return nil
	}
	var r string
	if k == "Retry-After" {
		r = upstream.RelayedRetryAfter(v[0])
	} else {
		r = upstream.RelayedRetryAfterMs(v[0])
	}
	switch {
	case r == "":
		return nil
	case r == v[0]:
		return v[:1]
	}
	return []string{r}
}

// upstreamRequestID is the provider's id of the answer (the first of
// upstreamRequestIDHeaders it carries), or nil: none, or one that is no
// id (too long, not printable ASCII, carrying the secret).
func upstreamRequestID(src http.Header, secret string) []string {
	for _, k := range upstreamRequestIDHeaders {
		v := src[k]
		if len(v) == 0 {
			continue
		}
		if !printableToken(v[0]) || containsSecret(v[:1], secret) {
			return nil
		}
		return v[:1]
	}
	return nil
}

// printableToken reports whether v is 1 to maxRequestIDLen visible ASCII
// characters.
func printableToken(v string) bool {
	if v == "" || len(v) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] > '~' {
			return false
		}
	}
	return true
}

// minSecretLen is the shortest key the scrub looks for: no provider's key
// is shorter, and a placeholder such as "a" would match every header.
const minSecretLen = 8

// containsSecret reports whether a value carries secret as a whole token:
// not preceded or followed by a character keys are made of (letters,
// digits, '_', '-', '.'), so "Bearer KEY" carries KEY and "xKEYx" does not.
// A secret under minSecretLen characters is never matched.
func containsSecret(values []string, secret string) bool {
	if len(secret) < minSecretLen {
		return false
	}
	for _, v := range values {
		for from := 0; ; {
			i := strings.Index(v[from:], secret)
			if i < 0 {
				break
			}
			i += from
			end := i + len(secret)
			if (i == 0 || !keyChar(v[i-1])) && (end == len(v) || !keyChar(v[end])) {
				return true
			}
			from = i + 1
		}
	}
	return false
}

// keyChar reports whether c is among the characters provider keys are
// made of.
func keyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}
