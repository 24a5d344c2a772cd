package sim_test

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/sim"
)

// A test starts a provider that answers after 20 ms and fails every request with 503
// once it has run for a minute.
func ExampleStartProvider() {
	p := sim.Provider{
		Name: "slow-later",
		TTFB: sim.Fixed(20 * time.Millisecond),
		Phases: []sim.Phase{
			{After: time.Minute, Errors: &sim.ErrorRate{Rate: 1, Status: http.StatusServiceUnavailable}},
		},
	}
	r, err := sim.StartProvider(p, sim.Options{})
	if err != nil {
		panic(err)
	}
	defer r.Close()

	resp, err := http.Post(r.URL()+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get(sim.HeaderProvider), r.RequestsFor("/v1/chat/completions"))
	// Output: 200 slow-later 1
}
