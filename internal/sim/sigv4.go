package sim

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SigV4 verification, written apart from the AWS SDK's signer (the
// gateway signs with that one), so a test of the two together checks the
// gateway against the protocol, not the SDK against itself. It follows
// the Signature Version 4 documentation for services other than S3: the
// canonical path is the path as sent, URI-encoded once more.

// AWSKey is a test credential pair the simulator accepts.
type AWSKey struct {
	AccessKeyID     string `yaml:"access_key_id"`
	SecretAccessKey string `yaml:"secret_access_key"`
}

// maxClockSkew is how far a signature's X-Amz-Date may be from now.
const maxClockSkew = 5 * time.Minute

// VerifySigV4 checks r's Authorization header (AWS4-HMAC-SHA256) against
// keys, for region and service, over body. now bounds the request's date.
func VerifySigV4(r *http.Request, body []byte, keys []AWSKey, region, service string, now time.Time) error {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return errors.New("missing AWS4-HMAC-SHA256 authorization")
	}
	fields := map[string]string{}
	for f := range strings.SplitSeq(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = v
	}
	cred := strings.Split(fields["Credential"], "/")
	if len(cred) != 5 || cred[4] != "aws4_request" {
		return errors.New("malformed Credential")
	}
	idx := slices.IndexFunc(keys, func(k AWSKey) bool { return k.AccessKeyID == cred[0] })
	if idx < 0 {
		return errors.New("UnrecognizedClientException: the security token included in the request is invalid")
	}
	if cred[2] != region || cred[3] != service {
		return errors.New("InvalidSignatureException: credential scope names another region or service")
	}
	amzDate := r.Header.Get("X-Amz-Date")
	t, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil || !strings.HasPrefix(amzDate, cred[1]) {
		return errors.New("InvalidSignatureException: bad X-Amz-Date")
	}
	if d := now.Sub(t); d > maxClockSkew || d < -maxClockSkew {
		return errors.New("InvalidSignatureException: signature expired")
	}
	signed := strings.Split(fields["SignedHeaders"], ";")
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		sum := sha256.Sum256(body)
		payload = hex.EncodeToString(sum[:])
	}
	creq := canonicalRequest(r, signed, payload)
	scope := strings.Join(cred[1:], "/")
	h := sha256.Sum256([]byte(creq))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(h[:])
	key := []byte("AWS4" + keys[idx].SecretAccessKey)
	for _, part := range cred[1:] {
		key = hmacSHA256(key, part)
	}
	want := hex.EncodeToString(hmacSHA256(key, toSign))
	if !hmac.Equal([]byte(want), []byte(fields["Signature"])) {
		return errors.New("InvalidSignatureException: the request signature we calculated does not match the signature you provided")
	}
	return nil
}

func hmacSHA256(key []byte, s string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// canonicalRequest is SigV4's canonical form of r.
func canonicalRequest(r *http.Request, signed []string, payload string) string {
	var b strings.Builder
	b.WriteString(r.Method + "\n")
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(uriEncode(path, false) + "\n")
	q := r.URL.Query()
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range q {
			if !yield(k) {
				return
			}
		}
	})
	var qs []string
	for _, k := range keys {
		vs := slices.Clone(q[k])
		slices.Sort(vs)
		for _, v := range vs {
			qs = append(qs, uriEncode(k, true)+"="+uriEncode(v, true))
		}
	}
	b.WriteString(strings.Join(qs, "&") + "\n")
	for _, name := range signed {
		var v string
		if name == "host" {
			v = r.Host
		} else {
			v = strings.Join(r.Header.Values(name), ",")
		}
		if name == "content-length" && v == "" {
			v = itoa(r.ContentLength)
		}
		b.WriteString(name + ":" + strings.Join(strings.Fields(v), " ") + "\n")
	}
	b.WriteString("\n" + strings.Join(signed, ";") + "\n" + payload)
	return b.String()
}

// uriEncode is SigV4's URI encoding: every byte but the unreserved
// characters is %XX; '/' too when encodeSlash.
func uriEncode(s string, encodeSlash bool) string {
	const hexd = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' && !encodeSlash {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexd[c>>4])
		b.WriteByte(hexd[c&15])
	}
	return b.String()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
