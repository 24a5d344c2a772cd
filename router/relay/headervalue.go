package relay

import "net/http"

// HeaderValue is h.Get(key) for a key already in canonical form: what
// Get does but canonicalizing the key on every call, which cost about a
// thousand instructions for each header a request or an answer is read
// for (callgrind). Package upstream has its own for the rate-limit
// headers.
func HeaderValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
