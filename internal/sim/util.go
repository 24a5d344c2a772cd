package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// abort breaks the connection mid-answer, the way a crashing upstream or a dropped
// proxy does, so the client sees a transport error rather than a clean end. net/http
// recovers this panic silently.
func abort() { panic(http.ErrAbortHandler) }

// scaled is d×n, saturating at maxDelay instead of overflowing.
func scaled(d time.Duration, n int) time.Duration {
	if d <= 0 || n <= 0 {
		return 0
	}
	if d > maxDelay/time.Duration(n) {
		return maxDelay
	}
	return d * time.Duration(n)
}

// sleepContext is the real Sleep.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// filler is the reply text. It never depends on the request: the simulator must not
// echo prompts.
var filler = strings.Fields("The quick brown fox jumps over the lazy dog.")

// chunkText is the i-th content chunk (0-based) of every reply.
func chunkText(i int) string {
	w := filler[i%len(filler)]
	if i == 0 {
		return w
	}
	return " " + w
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("sim: marshal %T: %v", v, err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}
