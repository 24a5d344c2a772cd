package router

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"
	hosts "github.com/firstbyte-dev/firstbyte/router/upstream"
)

// A cloud provider (azure, bedrock, vertex) is reached through its host
// adapter (package upstream): the host decides the URL of each call, the
// credential (refreshed off the request path by a goroutine the upstream
// owns), the framing of streams (Bedrock's event stream read back into
// Anthropic SSE) and how its errors read. The request path builds the
// body in the wire format the host's call speaks (u.kind: openai or
// anthropic) as for any provider; this file adapts what goes out and what
// comes back.

// cloudHost is an upstream's host adapter and what it needs at run time.
type cloudHost struct {
	*hosts.Host
	api       string             // the call its models go through (config.ProviderAPI)
	query     string             // the provider's query parameters, encoded
	stop      context.CancelFunc // ends the credential refresher
	endpoints sync.Map           // hostKey → *url.URL, built on first use
}

type hostKey struct {
	op, model string
	stream    bool
}

// useHost makes u a cloud provider's: its wire format is the one its call
// speaks, its credential the host's. parent bounds the refresher (nil:
// until closeHost).
func (u *upstream) useHost(name string, p *config.Provider, api string, parent context.Context, log *slog.Logger) {
	if parent == nil {
		parent = context.Background()
	}
	h := hosts.NewHost(name, p, hosts.HostOptions{Clock: hosts.Clock{Now: u.now}, Logger: log})
	ctx, stop := context.WithCancel(parent)
	u.cloud = &cloudHost{Host: h, api: api, stop: stop}
	u.providerName = h.GenAIProvider()
	u.kind = config.KindOpenAI
	if api == config.APIInvoke {
		u.kind = config.KindAnthropic
	}
	u.responses = p.Responses != nil && *p.Responses && u.kind == config.KindOpenAI
	u.cloud.query = u.query
	h.Start(ctx, credentialPrime)
}

// credentialPrime is how long building a cloud upstream waits for its
// first credential (a token endpoint, the AWS chain): past it the
// refresher keeps trying, and requests meanwhile fail over as auth.
const credentialPrime = 10 * time.Second

// servesFamily reports whether u serves an endpoint family: a cloud
// host's calls are chat (and Responses, translated or Azure's own), and
// embeddings on Azure only; token counting is no call of theirs here.
func (u *upstream) servesFamily(family string) bool {
	if u.cloud == nil {
		return true
	}
	switch family {
	case familyCountTokens:
		return false
	case familyEmbeddings:
		return u.cloud.Kind() == config.KindAzure
	}
	return true
}

// setExtras gives u the provider's configured headers and query
// parameters: the headers go on every request (before its credential, so
// SigV4 signs them), the parameters on every URL.
func (u *upstream) setExtras(p *config.Provider) {
	if len(p.Headers) > 0 {
		u.headers = make(http.Header, len(p.Headers))
		for k, v := range p.Headers {
			u.headers[http.CanonicalHeaderKey(k)] = []string{v}
		}
	}
	if len(p.Query) == 0 {
		return
	}
	q := url.Values{}
	for k, v := range p.Query {
		q.Set(k, v)
	}
	u.query = q.Encode()
	for _, parsed := range u.urls {
		parsed.RawQuery = joinQuery(parsed.RawQuery, u.query)
	}
}

// joinQuery appends the encoded parameters extra to the query q.
func joinQuery(q, extra string) string {
	switch {
	case extra == "":
		return q
	case q == "":
		return extra
	}
	return q + "&" + extra
}

// closeHost stops u's credential refresher (a reload dropped u).
func (u *upstream) closeHost() {
	if u.cloud != nil {
		u.cloud.stop()
	}
}

// hostTarget is the URL of a call to model: the operation is the one the
// request path chose (the path suffix of target, built from base_url).
func (h *cloudHost) hostTarget(target *url.URL, model string, stream bool) *url.URL {
	op := hosts.OpChat
	switch {
	case strings.HasSuffix(target.Path, hosts.OpResponses):
		op = hosts.OpResponses
	case strings.HasSuffix(target.Path, hosts.OpEmbeddings):
		op = hosts.OpEmbeddings
	}
	k := hostKey{op: op, model: model, stream: stream}
	if v, ok := h.endpoints.Load(k); ok {
		return v.(*url.URL)
	}
	e, ok := h.Endpoint(op, model, stream)
	if !ok {
		return target
	}
	eu := e.URL()
	eu.RawQuery = joinQuery(eu.RawQuery, h.query)
	v, _ := h.endpoints.LoadOrStore(k, eu)
	return v.(*url.URL)
}

// Anthropic versions the cloud hosts take in the body.
const (
	bedrockAnthropicVersion = "bedrock-2023-05-31"
	vertexAnthropicVersion  = "vertex-2023-10-16"
)

// hostBody is body as h's call takes it. A Messages body for Bedrock's
// invoke names no model and no stream (the URL says both) and carries
// anthropic_version (and the client's betas as anthropic_beta); Vertex's
// rawPredict names no model and keeps stream. Others go as they are.
func (h *cloudHost) hostBody(body []byte, betas []string) []byte {
	if h.api != config.APIInvoke {
		return body
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	delete(m, "model")
	switch h.Kind() {
	case config.KindBedrock:
		delete(m, "stream")
		m["anthropic_version"], _ = json.Marshal(bedrockAnthropicVersion)
		if len(betas) > 0 {
			m["anthropic_beta"], _ = json.Marshal(betas)
		}
	case config.KindVertex:
		m["anthropic_version"], _ = json.Marshal(vertexAnthropicVersion)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// hostBetas are the client's anthropic-beta values (Bedrock takes them
// in the body).
func hostBetas(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Anthropic-Beta") {
		for b := range strings.SplitSeq(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				out = append(out, b)
			}
		}
	}
	return out
}

// hostResponse adapts a successful answer: a Bedrock stream's event-stream
// frames become the Anthropic SSE they carry.
func (h *cloudHost) hostResponse(resp *http.Response) {
	if h.Kind() != config.KindBedrock || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/vnd.amazon.eventstream") {
		return
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{hosts.NewEventStreamReader(resp.Body, 0), resp.Body}
	resp.Header.Set("Content-Type", "text/event-stream")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
}

// hostException is the status an event-stream exception frame stands for
// (hosts.StreamExceptionStatus), when err is one.
func hostException(err error) (int, bool) {
	var ex *hosts.StreamException
	if !errors.As(err, &ex) {
		return 0, false
	}
	return hosts.StreamExceptionStatus(ex.Type), true
}

// judge reads an error answer of h's host (status, error.type, a retry
// delay from its body, a context overflow).
func (h *cloudHost) judge(status int, header http.Header, body []byte, now time.Time) (int, string, time.Time, bool) {
	e := h.JudgeError(status, header, body)
	var at time.Time
	if e.RetryAfter > 0 {
		at = now.Add(e.RetryAfter)
	}
	return e.Status, e.ErrorType, at, e.ContextOverflow
}
