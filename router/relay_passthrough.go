package router

import (
	"io"
	"net/http"
	"strconv"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router/translate"
	"github.com/firstbyte-dev/firstbyte/telemetry"
)

// An upstream 4xx that is not failover-safe is the client's to see: its
// status, content type and body, translated into the client's error shape
// when the formats differ. Its first maxErrorHeld bytes are read before it
// is judged (a provider's context-length overflow fails over instead).

// passAnswer is an upstream error held for the client.
type passAnswer struct {
	prefix []byte // what was read of the body (nil: nothing yet)
	whole  bool   // prefix is all of it
}

// reachClientError reads what it needs of an upstream 4xx to judge it: a
// context overflow fails over (another provider may have a larger window);
// anything else is for the client.
func (a *attempt) reachClientError() bool {
	resp, s := a.resp, a.resp.StatusCode
	a.kind = answerPassThrough
	if s != http.StatusBadRequest && s != http.StatusRequestEntityTooLarge && a.x.conv == convNone {
		// Relayed as it comes: nothing to judge or translate.
		a.res.Wait += a.g.since(a.sent)
		a.clientError()
		return true
	}
	errBody, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorHeld+1))
	a.res.Wait += a.g.since(a.sent)
	if (s == http.StatusBadRequest || s == http.StatusRequestEntityTooLarge) && translate.IsContextOverflow(s, errBody) {
		// The provider's own context limit: another provider may have a
		// larger window. Not the provider's fault.
		a.kind = answerNone
		a.failover(s, fault.ErrorContextOverflow)
		return false
	}
	a.pass = passAnswer{prefix: errBody, whole: len(errBody) <= maxErrorHeld}
	a.clientError()
	return true
}

// clientError records an upstream error handed to the client.
func (a *attempt) clientError() {
	s := a.resp.StatusCode
	a.res.Status, a.res.Outcome, a.res.ErrorType = s, telemetry.OutcomeClientError, strconv.Itoa(s)
}

// deliverPassThrough hands the upstream's error to the client: a body in
// the client's own format that is not whole in hand is relayed as it
// comes, after the prefix, with the upstream's own framing; a translated
// error is made from the prefix alone.
func (a *attempt) deliverPassThrough(w http.ResponseWriter, route *Route) int {
	resp, prefix := a.resp, a.pass.prefix
	h := w.Header()
	relayed := a.x.conv == convNone && !a.pass.whole
	copyResponseHeaders(h, resp.Header, !relayed, a.cand.upstream.apiKey)
	if a.x.conv != convNone {
		// The other API's error, in the client's shape: status, type and
		// message kept. A compressed body cannot be read (the gateway never
		// asked for one): its bytes must not become the message.
		if encoded(resp.Header) {
			prefix = []byte("upstream answered " + strconv.Itoa(resp.StatusCode) + " with a compressed body (Content-Encoding) the gateway cannot translate")
		}
		prefix = a.x.errorBody(resp.StatusCode, prefix)
		h.Del("Content-Encoding")
		h["Content-Type"] = jsonContentType
	}
	if !relayed {
		h.Set("Content-Length", strconv.Itoa(len(prefix)))
	}
	setGatewayHeaders(h, route, a.cand.Target)
	w.WriteHeader(resp.StatusCode)
	if relayed {
		flushingCopy(w, prefix, resp.Body, a.g.writeTimeout)
	} else {
		_, _ = w.Write(prefix)
	}
	return resp.StatusCode
}
