package router

import (
	"net/http"

	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

// transportOf is what carries u's requests: its own transport (its http2
// and tls settings), else the gateway's.
func (g *Gateway) transportOf(u *upstream.Provider) http.RoundTripper {
	if u.Transport != nil {
		return u.Transport
	}
	return g.transport
}
