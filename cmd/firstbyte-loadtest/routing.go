package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/firstbyte-dev/firstbyte/cmd/internal/routinge2e"
)

// The routing run (-routing): routing quality end to end. For each scenario
// and each arm — the latency modes, fallback as a reference, and the oracle
// (the best fixed order for each phase, sent in X-Firstbyte-Provider-Order)
// — it starts three simulated providers in process and a fresh gateway (the
// real binary) in front of them, drives 8 closed-loop clients for the
// scenario's length and keeps what every request saw. Arms run one at a
// time, their order rotated each round, so machine noise hits them alike.

// The arms of a routing run, in report order.
const armOracle = "oracle"

var routingArms = []string{"least-latency", "ewma-latency", "reliable-latency", "fallback", armOracle}

// latencyModes are the arms the goals are about.
var latencyModes = []string{"least-latency", "ewma-latency", "reliable-latency"}

// routingPlan is what a routing run runs.
type routingPlan struct {
	quick     bool
	rounds    int
	scenarios []routinge2e.Scenario
	rawDir    string // when set, every arm run's requests go to a CSV file here
}

// quickScenarios are the standard ones at about a third of the length: a
// smoke test of the run itself, too short for figures to quote.
func quickScenarios() []routinge2e.Scenario {
	s := time.Second
	return []routinge2e.Scenario{
		routinge2e.Stable(4 * s),
		routinge2e.Slowdown(1500*time.Millisecond, 4*s, 8*s),
		routinge2e.QuickFaults(4 * s),
		routinge2e.SlowFaults(4 * s),
		routinge2e.Hang(time.Second, 3*s, 4*s, false),
		routinge2e.Hang(time.Second, 3*s, 4*s, true),
		routinge2e.RevokedKey(4 * s),
		routinge2e.RateLimited(4 * s),
		routinge2e.Outage(time.Second, 2500*time.Millisecond, 4*s),
		routinge2e.Tail(4 * s), routinge2e.TailSpikes(4 * s), routinge2e.Capacity(4 * s), routinge2e.Fleet(4 * s), routinge2e.Cache(4 * s),
	}
}

// pickScenarios keeps the scenarios named in list (comma-separated; ""
// keeps all), in their standard order.
func pickScenarios(all []routinge2e.Scenario, list string) ([]routinge2e.Scenario, error) {
	if list == "" {
		return all, nil
	}
	want := strings.Split(list, ",")
	var out []routinge2e.Scenario
	for _, s := range all {
		if slices.Contains(want, s.Name) {
			out = append(out, s)
		}
	}
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
	}
	for _, w := range want {
		if !slices.Contains(names, w) {
			return nil, fmt.Errorf("-scenarios: no scenario %q (have %s)", w, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// routingResults is everything a routing run measured.
type routingResults struct {
	plan     routingPlan
	machine  machine
	started  time.Time
	duration time.Duration
	loads    []string // /proc/loadavg's 1-minute figure at the start of every arm run
	// runs[scenario][arm][round] are the outcomes of one arm run.
	runs map[string]map[string][][]routinge2e.Outcome
	// splits[scenario] is the static split the oracle's search found.
	splits map[string][]float64
}

func measureRouting(ctx context.Context, p routingPlan, gatewayPath, otelcolPath string, logw io.Writer) (*routingResults, error) {
	logf := func(format string, args ...any) { fmt.Fprintf(logw, format+"\n", args...) }
	if runtime.GOOS != "linux" {
		return nil, errors.New("it reads /proc for the load average: Linux only")
	}
	gatewayBin, err := exec.LookPath(gatewayPath)
	if err != nil {
		return nil, fmt.Errorf("-gateway %s: %w (run make build first)", gatewayPath, err)
	}
	bins := routingBins{gateway: gatewayBin}
	if otelcolPath != "" {
		if bins.otelcol, err = exec.LookPath(otelcolPath); err != nil {
			return nil, fmt.Errorf("-otelcol %s: %w (run make otelcol first)", otelcolPath, err)
		}
	}
	res := &routingResults{plan: p, started: time.Now(), machine: describeMachine(gatewayBin),
		runs: map[string]map[string][][]routinge2e.Outcome{}, splits: map[string][]float64{}}
	for _, s := range p.scenarios {
		res.runs[s.Name] = map[string][][]routinge2e.Outcome{}
	}
	for round := range p.rounds {
		for _, s := range p.scenarios {
			for _, arm := range rotate(armsOf(s), round) {
				logf("round %d/%d, scenario (%s) %s: %s for %v", round+1, p.rounds, s.Name, s.Title, arm, s.Duration)
				res.loads = append(res.loads, strings.Fields(loadAvg())[0])
				var outs []routinge2e.Outcome
				var err error
				switch split, found := res.splits[s.Name]; {
				case arm == armOracle && s.Split != nil && !found:
					outs, res.splits[s.Name], err = searchSplit(ctx, s, bins, logf)
				default:
					outs, err = runRoutingArm(ctx, s, arm, bins, split)
				}
				if err != nil {
					return nil, fmt.Errorf("scenario (%s), %s: %w", s.Name, arm, err)
				}
				res.runs[s.Name][arm] = append(res.runs[s.Name][arm], outs)
				if p.rawDir != "" {
					if err := writeRaw(filepath.Join(p.rawDir, fmt.Sprintf("%s-%s-r%d.csv", s.Name, arm, round+1)), outs); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	res.duration = time.Since(res.started)
	res.machine.loadEnd = loadAvg()
	return res, nil
}

func writeRaw(path string, outs []routinge2e.Outcome) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := routinge2e.WriteCSV(f, outs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// freeAddrPair returns two loopback addresses that were free a moment ago,
// for the gateway's two listeners. Both are held open while the second is
// picked: two freeAddr calls one after the other can get the same port
// back, and the gateway then refuses its config (seen once in a 23-minute
// run).
func freeAddrPair() (api, admin string, err error) {
	a, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", err
	}
	defer a.Close()
	b, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", err
	}
	defer b.Close()
	return a.Addr().String(), b.Addr().String(), nil
}
