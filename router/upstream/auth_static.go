package upstream

import "net/http"

// authorizer puts a host's credential on one upstream request. body is
// the exact body that will be sent (SigV4 signs its hash).
type authorizer interface {
	authorize(req *http.Request, body []byte) error
}

// headerKey is a static credential in one header: Azure's api-key,
// Gemini's x-goog-api-key, a Bedrock API key as Authorization: Bearer.
type headerKey struct {
	name  string   // canonical header name
	value []string // shared, never modified
}

func newHeaderKey(name, value string) *headerKey {
	return &headerKey{name: http.CanonicalHeaderKey(name), value: []string{value}}
}

func (k *headerKey) authorize(req *http.Request, _ []byte) error {
	req.Header[k.name] = k.value
	return nil
}

// bearerToken is a token that expires (Microsoft Entra ID, Google
// OAuth2), kept fresh by its refresher; the cache holds the whole
// "Bearer ..." value.
type bearerToken struct {
	cache *credentialCache[[]string]
}

func (b *bearerToken) authorize(req *http.Request, _ []byte) error {
	v, err := b.cache.get()
	if err != nil {
		return err
	}
	req.Header["Authorization"] = v
	return nil
}
