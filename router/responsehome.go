package router

import (
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/homes"
	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
	"github.com/firstbyte-dev/firstbyte/router/relay"
)

// Stored responses. A Responses request stores its response on the
// account that answers it (unless it says "store": false), and only that
// account can continue it: a follow-up naming it (previous_response_id)
// anywhere else gets 404 previous_response_not_found. So the gateway
// remembers each stored response's id with the target that stored it, for
// the provider's retention (homes.Retention, 30 days; at most
// homes.DefaultMax ids, the least recently used forgotten first), and a
// follow-up goes there first (X-Firstbyte-Selection: order), whatever the
// mode or the client's order would have put first; the other eligible
// targets follow, for when the home does not answer.
//
// The id rides on the attempt span (gen_ai.response.id), so the aggregator
// learns it from this gateway's spans and its peers': a follow-up sent to
// another replica goes to the same home (Options.ResponseHomes). An
// account that does not hold the id (its home unknown, or forgotten) is
// no fault of that account: its previous_response_not_found fails over to
// the next target, and is the client's answer when no target holds it.

// ResponseHomes is where the gateway asks which target stored a response
// it did not see stored itself: the collector's tracker, which learns the
// ids from attempt spans, peers' included.
type ResponseHomes interface {
	// ResponseHome is the target that stored id, if it is known and the
	// provider still keeps it at now.
	ResponseHome(id string, now time.Time) (target string, ok bool)
}

// responseIDReader is a stream that read the id of the response it
// carries (translate's pass-through of a Responses stream).
type responseIDReader interface{ ResponseID() string }

// responseHome is the target that stored id (a follow-up's
// previous_response_id), which its route puts first: as this gateway
// remembers it, else as the spans taught the collector.
func (g *Gateway) responseHome(id string) (string, bool) {
	now := g.now()
	if target, ok := g.homes.Get(id, now); ok {
		return target, true
	}
	if g.sharedHomes != nil {
		return g.sharedHomes.ResponseHome(id, now)
	}
	return "", false
}

// noteStored remembers the id of the response a's answer left stored at
// its provider with a's target, once it is known, and puts it on a's
// result (its span carries it). Called before the answer goes out (a
// client may continue it the moment it has it) and again after (a
// stream's first event may have come in pieces).
func (g *Gateway) noteStored(a *attempt) {
	if a.res.ResponseID != "" || a.x.conv != convNone || !a.c.stores {
		return
	}
	var id string
	switch a.kind {
	case answerUnary:
		body := a.unary.answer // checked to be one JSON value, unless encoded
		if body = body[jsonscan.SkipSpace(body, 0):]; relay.Encoded(a.resp.Header) || len(body) == 0 || body[0] != '{' {
			return
		}
		if v := jsonscan.Field(body, "id"); len(v) > 1 && v[0] == '"' {
			id = jsonscan.Unquote(v)
		}
	case answerStream:
		if s, ok := a.strm.Converter().(responseIDReader); ok {
			id = s.ResponseID()
		}
	}
	if id == "" || len(id) > homes.MaxIDLen {
		return
	}
	a.res.ResponseID = id
	g.homes.Put(id, a.cand.Target, g.now())
}
