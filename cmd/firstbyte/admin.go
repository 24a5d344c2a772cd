package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"

	"github.com/firstbyte-dev/firstbyte/collector"
	"github.com/prometheus/client_golang/prometheus"
)

// adminMux is the admin listener's endpoints but the span ingest (wired by
// startStack): /metrics, /health and /readyz open to whoever reaches the
// address (a scraper and a load balancer need them), /debug/routing and
// /admin/reload behind admin.token when it is set.
func (s *stack) adminMux(reg *prometheus.Registry) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", collector.MetricsHandler(reg))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.ready.Load() || s.draining.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.Handle("GET /debug/routing", s.adminAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.current().RoutingHandler().ServeHTTP(w, r)
	})))
	mux.Handle("POST /admin/reload", s.adminAuth(http.HandlerFunc(s.serveReload)))
	return mux
}

// adminAuth asks for "Authorization: Bearer TOKEN" when admin.token is set
// (the token in force now: a reload can change it), compared in constant
// time.
func (s *stack) adminAuth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := s.config().Admin.Token
		if token != "" {
			// Hashed first, so the comparison takes the same time whatever
			// the lengths.
			got := sha256.Sum256([]byte(r.Header.Get("Authorization")))
			want := sha256.Sum256([]byte("Bearer " + token))
			if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="firstbyte admin"`)
				http.Error(w, "missing or wrong admin token (Authorization: Bearer TOKEN)", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// reloadAnswer is the JSON body of POST /admin/reload.
type reloadAnswer struct {
	Result  string   `json:"result"`            // ok | refused
	Changed []string `json:"changed,omitempty"` // top-level keys that changed (ok)
	Errors  []string `json:"errors,omitempty"`  // "field.path: message" (refused)
}

// serveReload is POST /admin/reload: 200 with what changed, or 422 with
// every reason the file was refused (the old config keeps serving).
func (s *stack) serveReload(w http.ResponseWriter, _ *http.Request) {
	changed, errs := s.reload("admin")
	ans := reloadAnswer{Result: "ok", Changed: changed}
	status := http.StatusOK
	if errs != nil {
		ans = reloadAnswer{Result: "refused", Errors: errs}
		status = http.StatusUnprocessableEntity
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(ans)
}
