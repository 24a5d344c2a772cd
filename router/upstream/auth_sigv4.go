package upstream

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// bedrockService is the SigV4 signing name of the Bedrock runtime.
const bedrockService = "bedrock"

// sigV4 signs each request with AWS Signature Version 4 over its exact
// body (the payload hash is the body's SHA-256), with credentials the
// refresher keeps fresh: signing never fetches one.
//
// A request without a query string (every Bedrock call but those of a
// provider with query:) is signed here, as aws-sdk-go-v2's signer signs
// it (TestSigV4MatchesSDKSigner holds the two together), with the day's
// signing key derived once and the canonical request built in a pooled
// buffer: the SDK's signer spends some twenty microseconds and fifty
// allocations a request on maps, sorting and string joins. Anything else
// goes to the SDK's signer.
type sigV4 struct {
	creds  *credentialCache[aws.Credentials]
	signer *v4.Signer
	region string
	now    func() time.Time
	key    atomic.Pointer[signingKey] // the last day's key
	date   atomic.Pointer[amzDate]    // the last second's X-Amz-Date
}

// amzDate is a second's X-Amz-Date value (yyyymmddThhmmssZ).
type amzDate struct {
	sec int64
	s   string
}

// amzDateOf is t's X-Amz-Date, formatted once a second.
func (s *sigV4) amzDateOf(t time.Time) string {
	sec := t.Unix()
	if d := s.date.Load(); d != nil && d.sec == sec {
		return d.s
	}
	d := &amzDate{sec: sec, s: t.Format("20060102T150405Z")}
	s.date.Store(d)
	return d.s
}

// signingKey is the key derived for one secret, day and scope, and
// HMACs keyed with it for the requests to take and give back.
type signingKey struct {
	secret, day string
	macs        sync.Pool // hash.Hash: hmac.New(sha256.New, key)
}

func newSigV4(creds *credentialCache[aws.Credentials], region string, now func() time.Time) *sigV4 {
	return &sigV4{creds: creds, signer: v4.NewSigner(), region: region, now: now}
}

func (s *sigV4) authorize(req *http.Request, body []byte) error {
	creds, cerr := s.creds.get()
	if cerr != nil {
		return cerr
	}
	sum := sha256.Sum256(body)
	var hash [2 * sha256.Size]byte
	hex.Encode(hash[:], sum[:])
	t := s.now().UTC()
	if req.URL.RawQuery != "" || req.URL.Opaque != "" || req.URL.ForceQuery {
		// The signer escapes the (already escaped) path again for the
		// canonical request, as the service does when it checks it.
		return s.signer.SignHTTP(context.Background(), creds, req, string(hash[:]), bedrockService, s.region, t)
	}
	s.sign(req, creds, hash[:], t)
	return nil
}

// sigV4Unsigned are the headers the SDK's signer leaves out of the
// signature (its IgnoredHeaders), by their canonical names.
var sigV4Unsigned = map[string]bool{
	"Authorization": true, "User-Agent": true, "X-Amzn-Trace-Id": true, "Expect": true, "Transfer-Encoding": true,
}

// sigV4Lower are the signed headers a Bedrock request usually carries,
// lower-cased once.
var sigV4Lower = map[string]string{
	"Content-Type": "content-type", "Accept": "accept", "Accept-Encoding": "accept-encoding",
	"X-Amz-Date": "x-amz-date", "X-Amz-Security-Token": "x-amz-security-token",
	"Anthropic-Version": "anthropic-version", "Traceparent": "traceparent", "Tracestate": "tracestate",
}

// sigV4Buf is a canonical request's buffer and its signed headers.
type sigV4Buf struct {
	b     []byte
	names []sigV4Name
	sig   [sha256.Size]byte
}

// sigV4Name is a signed header: its name lower-cased, and the key of h it
// is under ("" for host and content-length, which are not read from h).
type sigV4Name struct{ lower, key string }

var sigV4Bufs = sync.Pool{New: func() any { return &sigV4Buf{b: make([]byte, 0, 1024), names: make([]sigV4Name, 0, 16)} }}

// sign puts the Authorization (and X-Amz-Date, X-Amz-Security-Token)
// headers of a query-less request on req.
func (s *sigV4) sign(req *http.Request, creds aws.Credentials, payloadHash []byte, t time.Time) {
	amzDate := s.amzDateOf(t)
	day := amzDate[:8]
	h := req.Header
	// X-Amz-Date's and Authorization's values share one allocation.
	vals := make([]string, 2)
	vals[0] = amzDate
	h["X-Amz-Date"] = vals[0:1:1]
	if creds.SessionToken != "" {
		h["X-Amz-Security-Token"] = []string{creds.SessionToken}
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if p := portOf(host); p != "" && (p == "80" && strings.EqualFold(req.URL.Scheme, "http") || p == "443" && strings.EqualFold(req.URL.Scheme, "https")) {
		host = host[:len(host)-len(p)-1]
		req.Host = host // as the SDK's signer does: the Host sent is the one signed
	}

	buf := sigV4Bufs.Get().(*sigV4Buf)
	defer sigV4Bufs.Put(buf)
	// The signed headers: host, content-length when there is a body, and
	// every header but the unsigned ones, lower-cased and sorted.
	names := append(buf.names[:0], sigV4Name{lower: "host"})
	if req.ContentLength > 0 {
		names = append(names, sigV4Name{lower: "content-length"})
	}
	for k := range h {
		if sigV4Unsigned[k] || strings.EqualFold(k, "Content-Length") {
			continue
		}
		lower, ok := sigV4Lower[k]
		if !ok {
			lower = strings.ToLower(k)
		}
		if lower == "host" {
			continue // signed as the request's Host, whatever the map says
		}
		names = append(names, sigV4Name{lower: lower, key: k})
	}
	// Sorted by name; two spellings of one header (set by direct map
	// writes) sit together, their values joined in one line.
	slices.SortFunc(names, func(a, b sigV4Name) int {
		if c := strings.Compare(a.lower, b.lower); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	buf.names = names

	b := append(buf.b[:0], req.Method...)
	b = append(b, '\n')
	b = appendSigV4Path(b, escapedPath(req.URL))
	b = append(b, "\n\n"...) // no query
	wrote := false           // a value is on the header's line
	for i, n := range names {
		if i == 0 || n.lower != names[i-1].lower {
			if i > 0 {
				b = append(b, '\n')
			}
			b = append(b, n.lower...)
			b = append(b, ':')
			wrote = false
		}
		switch {
		case n.key != "":
			for _, v := range h[n.key] {
				if wrote {
					b = append(b, ',')
				}
				wrote = true
				b = appendTrimmedValue(b, v)
			}
		case n.lower == "host":
			b = appendTrimmedValue(b, host)
		default:
			b = strconv.AppendInt(b, req.ContentLength, 10)
		}
	}
	b = append(b, '\n')
	b = append(b, '\n')
	signedStart := len(b)
	for i, n := range names {
		if i > 0 && n.lower == names[i-1].lower {
			continue
		}
		if i > 0 {
			b = append(b, ';')
		}
		b = append(b, n.lower...)
	}
	signedHeaders := b[signedStart:]
	b = append(b, '\n')
	b = append(b, payloadHash...)
	canonical := sha256.Sum256(b)

	// The string to sign, after the canonical request in the same buffer.
	toSign := len(b)
	b = append(b, "AWS4-HMAC-SHA256\n"...)
	b = append(b, amzDate...)
	b = append(b, '\n')
	scopeStart := len(b)
	b = append(b, day...)
	b = append(b, '/')
	b = append(b, s.region...)
	b = append(b, "/"+bedrockService+"/aws4_request"...)
	scope := b[scopeStart:]
	b = append(b, '\n')
	b = hex.AppendEncode(b, canonical[:])
	k := s.dayKey(creds.SecretAccessKey, day)
	mac := k.macs.Get().(hash.Hash)
	mac.Reset()
	mac.Write(b[toSign:])
	sig := mac.Sum(buf.sig[:0])
	k.macs.Put(mac)

	var auth strings.Builder
	auth.Grow(len("AWS4-HMAC-SHA256 Credential=") + len(creds.AccessKeyID) + 1 + len(scope) +
		len(", SignedHeaders=") + len(signedHeaders) + len(", Signature=") + 2*sha256.Size)
	auth.WriteString("AWS4-HMAC-SHA256 Credential=")
	auth.WriteString(creds.AccessKeyID)
	auth.WriteByte('/')
	auth.Write(scope)
	auth.WriteString(", SignedHeaders=")
	auth.Write(signedHeaders)
	auth.WriteString(", Signature=")
	var sigHex [2 * sha256.Size]byte
	hex.Encode(sigHex[:], sig[:])
	auth.Write(sigHex[:])
	vals[1] = auth.String()
	h["Authorization"] = vals[1:2:2]
	buf.b = b
}

// dayKey is the signing key of secret on day (yyyymmdd) for s's region
// and Bedrock, derived once a day.
func (s *sigV4) dayKey(secret, day string) *signingKey {
	if k := s.key.Load(); k != nil && k.day == day && k.secret == secret {
		return k
	}
	key := hmacSHA256([]byte("AWS4"+secret), day)
	key = hmacSHA256(key, s.region)
	key = hmacSHA256(key, bedrockService)
	key = hmacSHA256(key, "aws4_request")
	k := &signingKey{secret: secret, day: day}
	k.macs.New = func() any { return hmac.New(sha256.New, key) }
	s.key.Store(k)
	return k
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// appendSigV4Path appends the canonical URI of an escaped path: escaped
// once more (every byte but the unreserved ones and '/'), as the SDK's
// signer and the service do; "/" when it is empty.
func appendSigV4Path(b []byte, path string) []byte {
	if path == "" {
		return append(b, '/')
	}
	const hexUpper = "0123456789ABCDEF"
	for i := 0; i < len(path); i++ {
		c := path[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hexUpper[c>>4], hexUpper[c&15])
	}
	return b
}

// escapedPath is u.EscapedPath() without its allocation in the usual
// case: a RawPath of unreserved characters, '/', '@', ':' and valid %XX
// escapes that decodes to Path is the path EscapedPath returns (and the
// transport sends); anything else is left to EscapedPath.
func escapedPath(u *url.URL) string {
	raw, path := u.RawPath, u.Path
	if raw == "" {
		return u.EscapedPath()
	}
	j := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '%':
			if i+2 >= len(raw) || !isHexDigit(raw[i+1]) || !isHexDigit(raw[i+2]) {
				return u.EscapedPath()
			}
			c = unhex(raw[i+1])<<4 | unhex(raw[i+2])
			i += 2
		case 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == '~' || c == '/' || c == '@' || c == ':':
		default:
			return u.EscapedPath()
		}
		if j >= len(path) || path[j] != c {
			return u.EscapedPath()
		}
		j++
	}
	if j != len(path) {
		return u.EscapedPath()
	}
	return raw
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// appendTrimmedValue appends v without its leading and trailing white
// space, each inner run of spaces made one.
func appendTrimmedValue(b []byte, v string) []byte {
	v = strings.TrimSpace(v)
	space := false
	for i := 0; i < len(v); i++ {
		if v[i] == ' ' {
			if space {
				continue
			}
			space = true
		} else {
			space = false
		}
		b = append(b, v[i])
	}
	return b
}

// portOf is hostport's port ("" when it has none).
func portOf(hostport string) string {
	colon := strings.LastIndexByte(hostport, ':')
	if colon < 0 || strings.LastIndexByte(hostport, ']') > colon {
		return ""
	}
	return hostport[colon+1:]
}
