package router

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/relay"
)

// The gateway's own headers on an answer (which of the upstream's cross
// is package relay's to say).

// setGatewayHeaders puts the routing decision on a response: the route's
// attempts, selection and skips, and target, the target of the last
// attempt ("": none).
func setGatewayHeaders(h http.Header, r *Route, target string) {
	h["Date"] = relay.Date(time.Now()) // net/http's, formatted once a second instead of per answer
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
