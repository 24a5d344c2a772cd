package relay

import (
	"net/http"
	"strconv"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

// Relaying an attempt's answer to the client: the attempt decides what the
// client gets (reach, in package router) and hands the relay an Answer;
// the relay writes the headers that cross, the gateway's own, and the
// bytes, each write bounded by the write deadline.

// Answer is what relaying one attempt's answer reads: where it goes, the
// upstream's answer, how it was converted, and the attempt's own headers.
type Answer struct {
	W    http.ResponseWriter
	Resp *http.Response // the upstream's answer: status, headers, the body still to read
	// Converted: the client gets the answer translated into its own API's
	// format (its framing headers are the gateway's); Renamed: the answer
	// names the client's model, so its length changed (response_model).
	Converted, Renamed bool
	APIKey             string            // the provider's key, never relayed back
	Gateway            func(http.Header) // puts the gateway's own headers (the route's decision, the target)
	WriteTimeout       time.Duration     // bounds each write to the client
}

// Unary writes a checked unary answer (what the client gets of it:
// answer) and returns the status the client got.
func (a *Answer) Unary(answer []byte) int {
	resp, w := a.Resp, a.W
	h := w.Header()
	CopyResponseHeaders(h, resp.Header, a.Converted, a.APIKey)
	if a.Converted {
		h.Del("Content-Encoding")
		h["Content-Type"] = jsonContentType
		h["Content-Length"] = []string{strconv.Itoa(len(answer))}
	} else if a.Renamed && !Encoded(resp.Header) {
		h["Content-Length"] = []string{strconv.Itoa(len(answer))} // the model's name was rewritten
	}
	a.Gateway(h)
	w.WriteHeader(resp.StatusCode)
	if len(answer) > largeAnswer {
		// More than the socket buffers hold: a client that stops reading
		// would block the write for good without a deadline.
		wd := NewWriteDeadline(w, a.WriteTimeout)
		defer wd.Clear()
		wd.Extend()
	}
	_, _ = w.Write(answer)
	return resp.StatusCode
}

var jsonContentType = []string{"application/json"}

// largeAnswer is the unary answer size above which its write gets a
// deadline; smaller ones fit the kernel's buffers and never block long.
const largeAnswer = 256 << 10

// PassThrough hands the upstream's error to the client: a body in the
// client's own format that is not whole in hand (prefix is what was read
// of it) is relayed as it comes, after the prefix, with the upstream's own
// framing; a converted error is made from the prefix alone by errorBody.
// It returns the status the client got.
func (a *Answer) PassThrough(prefix []byte, whole bool, errorBody func(status int, body []byte) []byte) int {
	resp, w := a.Resp, a.W
	h := w.Header()
	relayed := !a.Converted && !whole
	CopyResponseHeaders(h, resp.Header, !relayed, a.APIKey)
	if a.Converted {
		// The other API's error, in the client's shape: status, type and
		// message kept. A compressed body cannot be read (the gateway never
		// asked for one): its bytes must not become the message.
		if Encoded(resp.Header) {
			prefix = []byte("upstream answered " + strconv.Itoa(resp.StatusCode) + " with a compressed body (Content-Encoding) the gateway cannot translate")
		}
		prefix = errorBody(resp.StatusCode, prefix)
		h.Del("Content-Encoding")
		h["Content-Type"] = jsonContentType
	}
	if !relayed {
		h.Set("Content-Length", strconv.Itoa(len(prefix)))
	}
	a.Gateway(h)
	w.WriteHeader(resp.StatusCode)
	if relayed {
		FlushingCopy(w, prefix, resp.Body, a.WriteTimeout)
	} else {
		_, _ = w.Write(prefix)
	}
	return resp.StatusCode
}

// Encoded reports whether the body comes content-encoded (then it is
// relayed as it is, unchecked: the gateway never asks for an encoding, so
// only a provider that sends one unasked does this).
func Encoded(h http.Header) bool {
	ce := upstream.HeaderValue(h, "Content-Encoding")
	return ce != "" && ce != "identity"
}
