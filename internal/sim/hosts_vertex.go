package sim

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// vertexTokenLife is how long a token the sim issues is good for.
const vertexTokenLife = time.Hour

// vertexFront issues tokens on POST /token and checks them on rawPredict
// and streamRawPredict (whose Messages body names no model), Gemini's
// generateContent and the OpenAI-compatible chat completions.
func (s *Server) vertexFront(w http.ResponseWriter, r *http.Request, body []byte) (http.ResponseWriter, []byte, bool) {
	if r.URL.Path == "/token" {
		s.issueToken(w)
		return w, nil, false
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !s.tokenValid(tok) {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": 401, "status": "UNAUTHENTICATED",
			"message": "Request had invalid authentication credentials. Expected OAuth 2 access token."}})
		return w, nil, false
	}
	if _, rest, ok := strings.Cut(r.URL.Path, "/publishers/google/models/"); ok && strings.HasPrefix(r.URL.Path, "/v1/projects/") {
		return s.geminiCall(w, r, body, rest)
	}
	if loc, ok := strings.CutSuffix(r.URL.Path, "/endpoints/openapi/chat/completions"); ok && strings.HasPrefix(loc, "/v1/projects/") && strings.Contains(loc, "/locations/") {
		// The OpenAI-compatible endpoint: the chat API as it is, the
		// model (meta/llama-3.3-70b-instruct-maas) in the body.
		r.URL.Path = "/v1/chat/completions"
		return &vertexWriter{ResponseWriter: w}, body, true
	}
	_, rest, ok := strings.Cut(r.URL.Path, "/publishers/anthropic/models/")
	model, verb, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || !strings.HasPrefix(r.URL.Path, "/v1/projects/") || (verb != "rawPredict" && verb != "streamRawPredict") {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"code": 404, "status": "NOT_FOUND", "message": "not found"}})
		return w, nil, false
	}
	if anthropicVersionOf(body) != "vertex-2023-10-16" || hasField(body, "model") {
		badRequest(w, "anthropic_version must be vertex-2023-10-16, and model is in the URL, not the body")
		return w, nil, false
	}
	r.URL.Path = "/v1/messages"
	return &vertexWriter{ResponseWriter: w}, withFields(body, map[string]any{"model": model}), true
}

// vertexFrontRefusals are the statuses Vertex's own front refuses with,
// before any model sees the request.
var vertexFrontRefusals = map[int]bool{
	http.StatusUnauthorized: true, http.StatusForbidden: true, http.StatusTooManyRequests: true,
}

// vertexWriter answers the refusals of vertexFrontRefusals in Google's error
// shape, the delay of a 429 in RetryInfo (no Retry-After header, as
// Google's quota errors carry none); other answers are the model's, as
// rawPredict relays them.
type vertexWriter struct {
	http.ResponseWriter
	google bool // the answer was replaced: later writes are dropped
}

func (v *vertexWriter) WriteHeader(status int) {
	if !vertexFrontRefusals[status] {
		v.ResponseWriter.WriteHeader(status)
		return
	}
	v.google = true
	name := googleStatus(status)
	v.Header().Del("Retry-After")
	e := map[string]any{"code": status, "status": name, "message": "Simulated " + name + " from Vertex AI."}
	if status == http.StatusTooManyRequests {
		e["details"] = []map[string]any{{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}}
	}
	writeJSON(v.ResponseWriter, status, map[string]any{"error": e})
}

func (v *vertexWriter) Write(p []byte) (int, error) {
	if v.google {
		return len(p), nil
	}
	return v.ResponseWriter.Write(p)
}

func (v *vertexWriter) Flush() { http.NewResponseController(v.ResponseWriter).Flush() }

func (v *vertexWriter) Unwrap() http.ResponseWriter { return v.ResponseWriter }

// issueToken answers an OAuth2 token request (any grant: the simulator
// trusts its own service-account file).
func (s *Server) issueToken(w http.ResponseWriter) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	tok := "sim-vertex-" + hex.EncodeToString(b[:])
	s.hostState.mu.Lock()
	s.hostState.tokens[tok] = s.now().Add(vertexTokenLife)
	s.hostState.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(vertexTokenLife.Seconds())})
}

func (s *Server) tokenValid(tok string) bool {
	s.hostState.mu.Lock()
	defer s.hostState.mu.Unlock()
	exp, ok := s.hostState.tokens[tok]
	return ok && s.now().Before(exp)
}

// geminiFront checks a Gemini API request's key.
func (s *Server) geminiFront(w http.ResponseWriter, r *http.Request, body []byte) (http.ResponseWriter, []byte, bool) {
	if key := r.Header.Get("X-Goog-Api-Key"); key == "" || key != s.host.APIKey {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "status": "INVALID_ARGUMENT",
			"message": "API key not valid. Please pass a valid API key.",
			"details": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}}}})
		return w, nil, false
	}
	_, rest, ok := strings.Cut(r.URL.Path, "/models/")
	if !ok {
		googleError(w, http.StatusNotFound, "not found")
		return w, nil, false
	}
	return s.geminiCall(w, r, body, rest)
}

// geminiCall serves rest ("{model}:generateContent" or
// ":streamGenerateContent", which must ask for SSE) through the
// Messages API.
func (s *Server) geminiCall(w http.ResponseWriter, r *http.Request, body []byte, rest string) (http.ResponseWriter, []byte, bool) {
	model, verb, _ := strings.Cut(rest, ":")
	stream := verb == "streamGenerateContent"
	switch {
	case verb != "generateContent" && !stream:
		googleError(w, http.StatusNotFound, "not found")
		return w, nil, false
	case stream && r.URL.Query().Get("alt") != "sse":
		googleError(w, http.StatusBadRequest, "the simulator streams server-sent events only: ask with alt=sse")
		return w, nil, false
	}
	msgBody, signed, refusal := geminiFront(body, model, stream)
	if refusal != "" {
		googleError(w, http.StatusBadRequest, refusal)
		return w, nil, false
	}
	r.URL.Path = "/v1/messages"
	g := &geminiWriter{hostWriter: hostWriter{ResponseWriter: w, stream: stream}, model: model, thoughts: geminiThoughts(body), signed: signed}
	var in geminiRequest
	if json.Unmarshal(body, &in) == nil && geminiThinks(&in) {
		g.signs, g.summary = true, in.GenerationConfig.ThinkingConfig.IncludeThoughts
	}
	return g, msgBody, true
}
