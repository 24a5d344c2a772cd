package upstream

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
	"github.com/firstbyte-dev/firstbyte/router/config"
)

var testAWS = aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}

// fakeClock is a settable clock whose After hands the refresher a channel
// the test fires.
type fakeClock struct {
	t     time.Time
	waits chan time.Duration
	fire  chan time.Time
}

func newFakeClock(t time.Time) *fakeClock {
	return &fakeClock{t: t, waits: make(chan time.Duration, 16), fire: make(chan time.Time)}
}

func (c *fakeClock) clock() Clock {
	return Clock{Now: func() time.Time { return c.t }, After: func(d time.Duration) <-chan time.Time {
		c.waits <- d
		return c.fire
	}}
}

// startedBedrock is a bedrock host that signs with testAWS, its first
// credential fetched.
func startedBedrock(t testing.TB, now time.Time) *Host {
	t.Helper()
	p := &config.Provider{Kind: config.KindBedrock, Region: "us-west-2", BaseURL: "http://127.0.0.1:9/"}
	h := NewHost("br", p, HostOptions{Clock: Clock{Now: func() time.Time { return now }}, AWSCredentials: staticCreds(testAWS), Getenv: func(string) string { return "" }})
	h.auth.(*sigV4).creds.refresh(context.Background())
	return h
}

// TestSigV4VerifiedApart: a Bedrock request the host signs (a model id
// with ':' in its path) passes the simulator's own SigV4 verifier, and a
// changed body does not.
func TestSigV4VerifiedApart(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := startedBedrock(t, now)
	e, _ := h.Endpoint(OpChat, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", true)
	body := []byte(`{"anthropic_version":"bedrock-2023-05-31","max_tokens":5,"messages":[]}`)
	req, _ := http.NewRequest("POST", e.String(), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if err := h.Authorize(req, body, true); err != nil {
		t.Fatal(err)
	}
	if got := req.Header.Get("Accept-Encoding"); got != "identity" {
		t.Errorf("Accept-Encoding = %q, want identity on a stream", got)
	}
	keys := []sim.AWSKey{{AccessKeyID: testAWS.AccessKeyID, SecretAccessKey: testAWS.SecretAccessKey}}
	if err := sim.VerifySigV4(req, body, keys, "us-west-2", "bedrock", now); err != nil {
		t.Errorf("VerifySigV4 = %v, want nil", err)
	}
	if err := sim.VerifySigV4(req, append(body, ' '), keys, "us-west-2", "bedrock", now); err == nil {
		t.Error("VerifySigV4 of another body = nil, want a mismatch")
	}
}

// TestSigV4MatchesSDKSigner: the host's signature is the SDK signer's for
// the same request, payload hash and time.
func TestSigV4MatchesSDKSigner(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := startedBedrock(t, now)
	body := []byte(`{"x":1}`)
	e, _ := h.Endpoint(OpChat, "anthropic.claude-3-haiku-20240307-v1:0", false)
	a, _ := http.NewRequest("POST", e.String(), bytes.NewReader(body))
	b, _ := http.NewRequest("POST", e.String(), bytes.NewReader(body))
	if err := h.Authorize(a, body, false); err != nil {
		t.Fatal(err)
	}
	const hash = "5041bf1f713df204784353e82f6a4a535931cb64f1f4b4a5aeaffcb720918b22" // sha256 of {"x":1}
	if err := v4.NewSigner().SignHTTP(context.Background(), testAWS, b, hash, "bedrock", "us-west-2", now); err != nil {
		t.Fatal(err)
	}
	if ga, gb := a.Header.Get("Authorization"), b.Header.Get("Authorization"); ga != gb {
		t.Errorf("Authorization = %s, want the SDK's %s", ga, gb)
	}
	if !strings.Contains(a.Header.Get("Authorization"), "/us-west-2/bedrock/aws4_request") {
		t.Errorf("scope: %s", a.Header.Get("Authorization"))
	}
}

// TestSigV4FastPathMatchesSDKSigner: the signer's own canonical request
// gives the SDK's signature over requests of every shape it signs itself
// (headers of several values, inner spaces, a lower-case name, a session
// token, a default port, an escaped model id, no body), and a request
// with a query string is the SDK's own.
func TestSigV4FastPathMatchesSDKSigner(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 23, 59, 59, 0, time.UTC)
	withToken := testAWS
	withToken.SessionToken = "FwoGZXIvYXdzEXAMPLETOKEN"
	for _, tc := range []struct {
		name, url string
		creds     aws.Credentials
		header    http.Header
		body      string
	}{
		{"invoke stream", "https://bedrock-runtime.us-west-2.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream", testAWS,
			http.Header{"Content-Type": {"application/json"}, "Accept": {"application/vnd.amazon.eventstream"}}, `{"max_tokens":5}`},
		{"default port, session token", "https://bedrock-runtime.us-west-2.amazonaws.com:443/model/m/invoke", withToken,
			http.Header{"Content-Type": {"application/json"}}, `{"x":1}`},
		{"odd headers", "http://127.0.0.1:8080/model/a%40b/converse", testAWS,
			http.Header{"X-Tenant": {"  t1   two  spaces ", "second"}, "x-custom": {"lower\tcase "}, "User-Agent": {"firstbyte"}, "X-Empty": {""}, "Accept-Encoding": {"identity"}}, `{}`},
		{"no body", "http://127.0.0.1:8080/model/m/invoke", testAWS, http.Header{}, ``},
		{"several values, empty ones, a Host header", "http://127.0.0.1:8080/model/us.anthropic.claude-v1%3A0/invoke-with-response-stream", testAWS,
			http.Header{"X-A": {"", "1", "", " 2 "}, "X-B": {}, "Host": {"ignored.example"}, "Traceparent": {"00-abc-def-01"}, "Content-Type": {"application/json"}}, `{"a":1}`},
		{"a query string", "http://127.0.0.1:8080/model/m/invoke?team=a%20b&x=1", testAWS, http.Header{"Content-Type": {"application/json"}}, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := newCredentialCache("br", awsProviderFetch(staticCreds(tc.creds)), Clock{}, nil)
			cache.refresh(context.Background())
			s := newSigV4(cache, "us-west-2", func() time.Time { return now })
			mk := func() *http.Request {
				r, _ := http.NewRequest("POST", tc.url, strings.NewReader(tc.body))
				for k, v := range tc.header {
					r.Header[k] = slices.Clone(v)
				}
				return r
			}
			a, b := mk(), mk()
			if err := s.authorize(a, []byte(tc.body)); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(tc.body))
			if err := v4.NewSigner().SignHTTP(context.Background(), tc.creds, b, hex.EncodeToString(sum[:]), "bedrock", "us-west-2", now); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token"} {
				if ga, gb := a.Header.Get(k), b.Header.Get(k); ga != gb {
					t.Errorf("%s = %q, want the SDK's %q", k, ga, gb)
				}
			}
			if a.Host != b.Host {
				t.Errorf("Host %q, want the SDK's %q", a.Host, b.Host)
			}
		})
	}
}

// TestHostCredentials: each kind's static credential goes where its host
// reads it; a Bedrock API key comes from the environment when api_key is
// empty.
func TestHostCredentials(t *testing.T) {
	t.Parallel()
	env := func(k string) string {
		if k == "AWS_BEARER_TOKEN_BEDROCK" {
			return "bedrock-key-from-env"
		}
		return ""
	}
	tests := []struct {
		name         string
		p            config.Provider
		header, want string
	}{
		{"azure api-key", config.Provider{Kind: config.KindAzure, APIKey: "azure-key-123"}, "Api-Key", "azure-key-123"},
		{"gemini x-goog-api-key", config.Provider{Kind: config.KindGemini, APIKey: "gem-key-123"}, "X-Goog-Api-Key", "gem-key-123"},
		{"bedrock api key", config.Provider{Kind: config.KindBedrock, Region: "us-east-1", APIKey: "bedrock-key-123"}, "Authorization", "Bearer bedrock-key-123"},
		{"bedrock api key from env", config.Provider{Kind: config.KindBedrock, Region: "us-east-1"}, "Authorization", "Bearer bedrock-key-from-env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHost("p", &tt.p, HostOptions{Getenv: env})
			req, _ := http.NewRequest("POST", "http://127.0.0.1:9/", nil)
			if err := h.Authorize(req, nil, false); err != nil {
				t.Fatal(err)
			}
			if got := req.Header.Get(tt.header); got != tt.want {
				t.Errorf("%s = %q, want %q", tt.header, got, tt.want)
			}
		})
	}
}

// TestCredentialCacheRefresh: a token is renewed 5 minutes before it
// expires; a failed renewal keeps the old token while it is good, logs
// once, retries with backoff, and the request path gets a CredentialError
// only when the token has expired.
func TestCredentialCacheRefresh(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clk := newFakeClock(start)
	var logs bytes.Buffer
	var fail error
	n := 0
	fetch := func(context.Context) ([]string, time.Time, error) {
		n++
		if fail != nil {
			return nil, time.Time{}, fail
		}
		return []string{"Bearer tok-" + string(rune('0'+n))}, clk.t.Add(time.Hour), nil
	}
	c := newCredentialCache("vx", fetch, clk.clock(), slog.New(slog.NewTextHandler(&logs, nil)))
	if _, err := c.get(); err == nil || err.Reason != errNotYet {
		t.Fatalf("get before the first fetch = %v, want %q", err, errNotYet)
	}
	if d := c.refresh(context.Background()); d != 55*time.Minute {
		t.Errorf("next refresh in %v, want 55m (5m before expiry)", d)
	}
	if v, err := c.get(); err != nil || v[0] != "Bearer tok-1" {
		t.Fatalf("get = %v, %v", v, err)
	}
	fail = errors.New("token endpoint answered 503")
	clk.t = start.Add(55 * time.Minute)
	if d := c.refresh(context.Background()); d != retryMin {
		t.Errorf("retry in %v, want %v", d, retryMin)
	}
	if d := c.refresh(context.Background()); d != 2*retryMin {
		t.Errorf("second retry in %v, want %v", d, 2*retryMin)
	}
	if v, err := c.get(); err != nil || v[0] != "Bearer tok-1" {
		t.Errorf("get while the old token is good = %v, %v; want tok-1", v, err)
	}
	clk.t = start.Add(time.Hour)
	_, err := c.get()
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("get after expiry = %v, want the fetch's reason", err)
	}
	if got := strings.Count(logs.String(), "cannot obtain"); got != 1 {
		t.Errorf("%d log lines of the failure, want 1:\n%s", got, logs.String())
	}
	if strings.Contains(logs.String(), "tok-") {
		t.Error("the log shows the token")
	}
	fail = nil
	if d := c.refresh(context.Background()); d != 55*time.Minute {
		t.Errorf("after recovery, next refresh in %v, want 55m", d)
	}
	if v, err := c.get(); err != nil || !strings.HasPrefix(v[0], "Bearer tok-") {
		t.Errorf("get after recovery = %v, %v", v, err)
	}
}

// TestCredentialCacheRun: the refresher fetches at once, then waits as
// refresh says, and stops with its context.
func TestCredentialCacheRun(t *testing.T) {
	t.Parallel()
	clk := newFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	fetched := make(chan struct{}, 4)
	fetch := func(context.Context) ([]string, time.Time, error) {
		fetched <- struct{}{}
		return []string{"Bearer t"}, clk.t.Add(10 * time.Minute), nil
	}
	c := newCredentialCache("az", fetch, clk.clock(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.run(ctx, 0); close(done) }()
	<-fetched
	if d := <-clk.waits; d != 5*time.Minute {
		t.Errorf("waits %v, want 5m (5m before a 10m expiry)", d)
	}
	clk.fire <- clk.t
	<-fetched
	<-clk.waits
	cancel()
	<-done
}

// BenchmarkCredentialRead: the request path's read of a cached token.
func BenchmarkCredentialRead(b *testing.B) {
	now := time.Now()
	c := newCredentialCache("vx", func(context.Context) ([]string, time.Time, error) {
		return []string{"Bearer t"}, now.Add(time.Hour), nil
	}, Clock{Now: func() time.Time { return now }}, nil)
	c.refresh(context.Background())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.get(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSigV4 is the cost of signing one Bedrock request by body size.
func BenchmarkSigV4(b *testing.B) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := startedBedrock(b, now)
	e, _ := h.Endpoint(OpChat, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", true)
	for _, size := range []int{1 << 10, 16 << 10, 64 << 10} {
		body := bytes.Repeat([]byte("a"), size)
		b.Run(byteSize(size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				req, _ := http.NewRequest("POST", e.String(), nil)
				req.ContentLength = int64(size)
				if err := h.Authorize(req, body, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func byteSize(n int) string { return strconv.Itoa(n>>10) + "KiB" }

// staticCreds is a provider of the fixed key pair c.
func staticCreds(c aws.Credentials) aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return c, nil })
}

// TestEscapedPathIsURLs: the signer's path is the one the transport sends
// (url.URL.EscapedPath), RawPath consistent with Path or not.
func TestEscapedPathIsURLs(t *testing.T) {
	t.Parallel()
	for _, u := range []url.URL{
		{Path: "/model/us.anthropic.claude-v1:0/invoke", RawPath: "/model/us.anthropic.claude-v1%3A0/invoke"},
		{Path: "/model/a:b/x", RawPath: "/model/a%3ab/x"},
		{Path: "/model/a:b/x", RawPath: "/model/a:b/x"},
		{Path: "/model/a/b/x", RawPath: "/model/a%2Fb/x"},
		{Path: "/model/a b", RawPath: "/model/a%20b"},
		{Path: "/model/a b", RawPath: "/model/a b"},
		{Path: "/model/ab", RawPath: "/model/a%2"},
		{Path: "/model/ab", RawPath: "/model/a%zzb"},
		{Path: "/model/other", RawPath: "/model/a%3A0"},
		{Path: "/model/a:0/more", RawPath: "/model/a%3A0"},
		{Path: "/model/a", RawPath: "/model/a%3A0"},
		{Path: "/m/a+b", RawPath: "/m/a+b"},
		{Path: "/m/a@b", RawPath: "/m/a%40b"},
		{Path: "/m/é", RawPath: "/m/%C3%A9"},
		{Path: "/m/x", RawPath: ""},
		{Path: "*", RawPath: ""},
	} {
		if got, want := escapedPath(&u), u.EscapedPath(); got != want {
			t.Errorf("escapedPath(%q, %q) = %q, want %q", u.Path, u.RawPath, got, want)
		}
	}
}
