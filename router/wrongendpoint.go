package router

import (
	"net/url"
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/mode"
)

// warnWrongEndpoint logs, once per target and URL, that the target
// answered status saying the endpoint it was called at does not exist
// (fault.ErrorConfig): most often a base_url without its version segment
// (".../v1"). Every such answer fails over and counts as a provider fault
// (error.type config); the warning is what tells the operator which URL
// to fix. The URL is logged without credentials or query.
func (g *Gateway) warnWrongEndpoint(c *mode.Candidate, called *url.URL, status int) {
	where := (&url.URL{Scheme: called.Scheme, Host: called.Host, Path: called.Path}).String()
	if !c.Upstream.FirstWrongURL(where) {
		return
	}
	g.log.Warn("target answered "+strconv.Itoa(status)+": the endpoint it was called at does not exist; check its base_url (an OpenAI-compatible one usually ends in a version, such as /v1); its requests fail over meanwhile",
		"target", c.Target, "url", where, "status", status)
}
