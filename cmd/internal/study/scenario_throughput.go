package study

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"time"
)

// (throughput): what a caller of a long answer waits for is the last
// token, not the first. t1 starts fastest but streams slowest; t2 starts
// slowest but streams fastest; the answers are 2, 20 or 600 tokens long, a
// third each, and each request's max_tokens says which.

// The targets of (throughput), in declaration order.
var throughputTargets = []struct {
	Name   string
	Median time.Duration
	Rate   float64 // output tokens per second
}{
	{"t1", 100 * time.Millisecond, 30},
	{"t2", 400 * time.Millisecond, 150},
	{"t3", 250 * time.Millisecond, 60},
}

// ThroughputLengths are (throughput)'s answer lengths, each request the
// next in turn.
var ThroughputLengths = []int{2, 20, 600}

// ThroughputWarmUp is (throughput)'s warm-up: longer than its slowest
// answer (600 tokens from t1, 20.1 s), so the answer lengths and output
// rates are known as a gateway that has run a while knows them. With the
// usual 2 s, only short answers have ended when the measured time starts:
// the lengths look short and the first long answers go to t1.
const ThroughputWarmUp = 30 * time.Second

// Goals of (throughput).
const (
	CompletionRatio     = 1.10 // least-completion's mean time to the last token over the oracle's
	LongAnswerRatio     = 0.6  // its 600-token answers' mean over least-latency's
	ShortAnswerRatio    = 1.05 // its 2-token answers' mean over least-latency's
	throughputLongest   = 600
	throughputShortest  = 2
	throughputClients   = 16
	completionMode      = "least-completion"
	firstByteLatestMode = "least-latency"
)

func throughputScenario() *Scenario {
	var ts []Target
	for _, t := range throughputTargets {
		ts = append(ts, Target{Name: t.Name, Median: t.Median})
	}
	return &Scenario{
		Name: "throughput", Title: "a fast start against a fast stream", Targets: ts, FirstByte: DefaultFirstByte,
		Clients: throughputClients, Lengths: ThroughputLengths, WarmUp: ThroughputWarmUp,
		About: fmt.Sprintf("t1 answers its first byte in 100 ms and streams 30 tokens/s, t2 in 400 ms at 150 tokens/s, "+
			"t3 in 250 ms at 60 tokens/s (medians; sigma %g). Answers are 2, 20 or 600 tokens long, a third each, "+
			"the request's max_tokens saying which; %d clients, %s warm-up. A 600-token answer takes 20.1 s from t1 and 4.4 s from "+
			"t2; a 2-token one 0.17 s from t1 and 0.41 s from t2.", Sigma, throughputClients, secs(ThroughputWarmUp)),
		Behave: func(i int, _ time.Duration) Behaviour {
			return Behaviour{Median: throughputTargets[i].Median, Rate: throughputTargets[i].Rate}
		},
	}
}

// MeanLastToken is the mean time to the last token of the served requests
// whose answers were tokens long (0: all of them); 0 with none.
func (r *Result) MeanLastToken(tokens int) time.Duration {
	v := r.lastTokens(tokens)
	if len(v) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range v {
		sum += d
	}
	return sum / time.Duration(len(v))
}

// QuantileLastToken is the nearest-rank q-quantile of the same.
func (r *Result) QuantileLastToken(tokens int, q float64) time.Duration {
	v := r.lastTokens(tokens)
	if len(v) == 0 {
		return 0
	}
	k := int(math.Ceil(q*float64(len(v)))) - 1
	return v[min(max(k, 0), len(v)-1)]
}

func (r *Result) lastTokens(tokens int) []time.Duration {
	if tokens == 0 {
		return r.LastToken
	}
	return r.LastTokenBy[tokens]
}

// lastTokenRatio is a's mean time to the last token of tokens-long answers
// (0: all) over b's.
func lastTokenRatio(a, b *Result, tokens int) float64 {
	if b.MeanLastToken(tokens) == 0 {
		return math.Inf(1)
	}
	return float64(a.MeanLastToken(tokens)) / float64(b.MeanLastToken(tokens))
}

// throughputGoals are (throughput)'s goals: least-completion near the
// oracle on the time to the last token, far ahead of least-latency on long
// answers and level with it on short ones; least-latency still the best of
// the unhedged modes on the first byte.
func (st *Study) throughputGoals() []Goal {
	var out []Goal
	lc, ll, o := st.Result("throughput", completionMode), st.Result("throughput", firstByteLatestMode), st.Result("throughput", Oracle)
	if lc != nil && o != nil {
		x := lastTokenRatio(lc, o, 0)
		out = append(out, Goal{Scenario: "throughput", Mode: lc.Mode, Value: x, Met: x <= CompletionRatio,
			Text:   fmt.Sprintf("(throughput) least-completion: mean time to the last token within %.2fx the oracle's", CompletionRatio),
			Figure: fmt.Sprintf("%.3fx (%s against %s)", x, sText(lc.MeanLastToken(0)), sText(o.MeanLastToken(0)))})
	}
	if lc != nil && ll != nil {
		for _, g := range []struct {
			tokens int
			limit  float64
		}{{throughputLongest, LongAnswerRatio}, {throughputShortest, ShortAnswerRatio}} {
			x := lastTokenRatio(lc, ll, g.tokens)
			out = append(out, Goal{Scenario: "throughput", Mode: lc.Mode, Value: x, Met: x <= g.limit,
				Text: fmt.Sprintf("(throughput) least-completion: %d-token answers' mean time to the last token <= %.2fx least-latency's",
					g.tokens, g.limit),
				Figure: fmt.Sprintf("%.3fx (%s against %s)", x, sText(lc.MeanLastToken(g.tokens)), sText(ll.MeanLastToken(g.tokens)))})
		}
	}
	if ll != nil {
		best, who := ll.Mean(), ll.Mode
		for _, m := range LatencyModes {
			if r := st.Result("throughput", m); r != nil && r.Mean() < best {
				best, who = r.Mean(), m
			}
		}
		out = append(out, Goal{Scenario: "throughput", Mode: ll.Mode, Value: ll.Mean().Seconds(), Met: who == ll.Mode,
			Text:   "(throughput) least-latency: the lowest mean time to first byte of the unhedged latency modes",
			Figure: fmt.Sprintf("%s (lowest: %s, %s)", msText(ll.Mean()), who, msText(best))})
	}
	return out
}

// sText prints d in seconds with three decimals.
func sText(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }

// writeLastTokenTable is (throughput)'s table of the time to the last
// token: mean and p99, by answer length and over all, and the mean time to
// first byte beside it.
func (st *Study) writeLastTokenTable(b *bytes.Buffer, i int, chart string) {
	s := st.Scenarios[i]
	b.WriteString("Time to the last token (a request's time to first byte plus its answer's streaming), " +
		"by answer length:\n\n")
	fmt.Fprintf(b, "![mean time to the last token by answer length](%s)\n\n", chart)
	b.WriteString("| mode | mean TTFB |")
	for _, n := range s.Lengths {
		fmt.Fprintf(b, " mean, %d tokens | p99, %d tokens |", n, n)
	}
	b.WriteString(" mean, all | p99, all | × oracle (mean, all) |\n|---|---:|" + strings.Repeat("---:|", 2*len(s.Lengths)+3) + "\n")
	o := st.Results[i][len(st.Modes)-1]
	for _, r := range st.Results[i] {
		fmt.Fprintf(b, "| %s | %s |", r.Mode, msText(r.Mean()))
		for _, n := range s.Lengths {
			fmt.Fprintf(b, " %s | %s |", sText(r.MeanLastToken(n)), sText(r.QuantileLastToken(n, 0.99)))
		}
		fmt.Fprintf(b, " %s | %s | %.2f |\n", sText(r.MeanLastToken(0)), sText(r.QuantileLastToken(0, 0.99)), lastTokenRatio(r, o, 0))
	}
	b.WriteString("\n")
}

// throughputOracleText says what (throughput)'s oracle does.
func throughputOracleText(s *Scenario) string {
	var parts []string
	for _, n := range s.Lengths {
		order, _ := oracleOrderAt(nil, s, 0, request{conv: -1, tokens: n})
		var names []string
		for _, i := range order {
			names = append(names, s.Targets[i].Name)
		}
		parts = append(parts, fmt.Sprintf("%d tokens: %s", n, strings.Join(names, ", ")))
	}
	return "Oracle: each request's order by expected time to its last token, knowing its length (" +
		strings.Join(parts, "; ") + ")."
}
