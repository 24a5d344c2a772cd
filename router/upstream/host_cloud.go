package upstream

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/firstbyte-dev/firstbyte/router/config"
	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// A cloud provider (azure, bedrock, vertex) is reached through its host
// adapter: the host decides the URL of each call, the credential
// (refreshed off the request path by a goroutine the Provider owns), the
// framing of streams (Bedrock's event stream read back into Anthropic
// SSE) and how its errors read. The request path builds the body in the
// wire format the host's call speaks (Provider.Kind: openai or anthropic)
// as for any provider; Cloud adapts what goes out and what comes back.

// Cloud is a Provider's host adapter and what it needs at run time.
type Cloud struct {
	*Host
	api       string             // the call its models go through (config.Config.ProviderAPI)
	query     string             // the provider's query parameters, encoded
	stop      context.CancelFunc // ends the credential refresher
	endpoints sync.Map           // cloudKey → *url.URL, built on first use
}

type cloudKey struct {
	op, model string
	stream    bool
}

// credentialPrime is how long building a cloud provider waits for its
// first credential (a token endpoint, the AWS chain): past it the
// refresher keeps trying, and requests meanwhile fail over as auth.
const credentialPrime = 10 * time.Second

// useCloud makes u a cloud provider's: its wire format is the one its
// call speaks, its credential the host's.
func (u *Provider) useCloud(name string, p *config.Provider, query string, o Options) {
	parent := o.Stop
	if parent == nil {
		parent = context.Background()
	}
	h := NewHost(name, p, HostOptions{Clock: Clock{Now: u.Now}, Logger: o.Logger, AWSCredentials: o.AWSCredentials})
	ctx, stop := context.WithCancel(parent)
	u.Cloud = &Cloud{Host: h, api: o.API, query: query, stop: stop}
	u.ProviderName = h.GenAIProvider()
	u.Kind = config.KindOpenAI
	if o.API == config.APIInvoke {
		u.Kind = config.KindAnthropic
	}
	u.Responses = p.Responses != nil && *p.Responses && u.Kind == config.KindOpenAI
	h.Start(ctx, credentialPrime)
}

// Close stops u's credential refresher (a reload dropped u).
func (u *Provider) Close() {
	if u.Cloud != nil {
		u.Cloud.stop()
	}
}

// setExtras gives u the provider's configured headers (put on every
// request before its credential, so SigV4 signs them) and query
// parameters (on every URL); it returns the parameters, encoded.
func (u *Provider) setExtras(p *config.Provider) string {
	if len(p.Headers) > 0 {
		u.Headers = make(http.Header, len(p.Headers))
		for k, v := range p.Headers {
			u.Headers[http.CanonicalHeaderKey(k)] = []string{v}
		}
	}
	if len(p.Query) == 0 {
		return ""
	}
	q := url.Values{}
	for k, v := range p.Query {
		q.Set(k, v)
	}
	query := q.Encode()
	for _, parsed := range u.urls {
		parsed.RawQuery = joinQuery(parsed.RawQuery, query)
	}
	return query
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

// ServesFamily reports whether u serves an endpoint family (chat,
// responses, embeddings, count_tokens): a cloud host's calls are chat
// (and Responses, translated or Azure's own), and embeddings on Azure
// only; token counting is no call of theirs here.
func (u *Provider) ServesFamily(family string) bool {
	if u.Cloud == nil {
		return true
	}
	switch family {
	case "count_tokens":
		return false
	case "embeddings":
		return u.Cloud.Kind() == config.KindAzure
	}
	return true
}

// Target is the URL of a call to model: the operation is the one the
// request path chose (the path suffix of target, built from base_url).
func (c *Cloud) Target(target *url.URL, model string, stream bool) *url.URL {
	op := OpChat
	switch {
	case strings.HasSuffix(target.Path, OpResponses):
		op = OpResponses
	case strings.HasSuffix(target.Path, OpEmbeddings):
		op = OpEmbeddings
	}
	k := cloudKey{op: op, model: model, stream: stream}
	if v, ok := c.endpoints.Load(k); ok {
		return v.(*url.URL)
	}
	e, ok := c.Endpoint(op, model, stream)
	if !ok {
		return target
	}
	eu := e.URL()
	eu.RawQuery = joinQuery(eu.RawQuery, c.query)
	v, _ := c.endpoints.LoadOrStore(k, eu)
	return v.(*url.URL)
}

// Anthropic versions the cloud hosts take in the body.
const (
	bedrockAnthropicVersion = "bedrock-2023-05-31"
	vertexAnthropicVersion  = "vertex-2023-10-16"
)

// Body is body as c's call takes it. A Messages body for Bedrock's invoke
// names no model and no stream (the URL says both) and carries
// anthropic_version (and the client's betas as anthropic_beta); Vertex's
// rawPredict names no model and keeps stream. Others go as they are.
//
// The body is rewritten member by member, each value's bytes copied as
// they came (no decoding into a map and encoding again): anthropic_version
// first, then the client's members in their order. A body that is not a
// JSON object goes as it is, for the host to refuse.
func (c *Cloud) Body(body []byte, betas []string) []byte {
	if c.api != config.APIInvoke {
		return body
	}
	bedrock := c.Kind() == config.KindBedrock
	version := vertexAnthropicVersion
	if bedrock {
		version = bedrockAnthropicVersion
	}
	out := make([]byte, 0, len(body)+64)
	out = append(out, `{"anthropic_version":`...)
	out = jsonscan.AppendString(out, version)
	if bedrock && len(betas) > 0 {
		out = append(out, `,"anthropic_beta":[`...)
		for i, b := range betas {
			if i > 0 {
				out = append(out, ',')
			}
			out = jsonscan.AppendString(out, b)
		}
		out = append(out, ']')
	}
	ok := jsonscan.Object(body, func(name, val []byte) {
		switch string(name) {
		case "model", "anthropic_version":
			return
		case "stream":
			if bedrock {
				return
			}
		case "anthropic_beta":
			if bedrock && len(betas) > 0 {
				return
			}
		}
		out = append(out, ',')
		out = jsonscan.AppendString(out, name)
		out = append(out, ':')
		out = append(out, val...)
	})
	if !ok {
		return body
	}
	return append(out, '}')
}

// Betas are a client's anthropic-beta values (Bedrock takes them in the
// body).
func Betas(h http.Header) []string {
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

// Call is the call c's models go through (config.Config.ProviderAPI):
// invoke, converse, gemini or openai.
func (c *Cloud) Call() string { return c.api }

// Response adapts a successful stream: a Bedrock event stream's frames
// become the Anthropic SSE they carry (invoke), or the Converse events
// (converse).
func (c *Cloud) Response(resp *http.Response) {
	if c.Kind() != config.KindBedrock || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/vnd.amazon.eventstream") {
		return
	}
	var r *EventStreamReader
	if c.api == config.APIConverse {
		r = NewConverseStreamReader(resp.Body, 0)
	} else {
		r = NewEventStreamReader(resp.Body, 0)
	}
	r.closer = resp.Body
	resp.Body = r
	resp.Header["Content-Type"] = eventStreamType
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
}

// eventStreamType is the Content-Type of a stream Response adapted (one
// slice for all: header values are read, never written in place).
var eventStreamType = []string{"text/event-stream"}

// Judge reads an error answer of c's host (JudgeError), and when its body
// asks to be left alone until (zero: it does not say).
func (c *Cloud) Judge(status int, header http.Header, body []byte, now time.Time) (HostError, time.Time) {
	e := c.JudgeError(status, header, body)
	var at time.Time
	if e.RetryAfter > 0 {
		at = now.Add(e.RetryAfter)
	}
	return e, at
}
