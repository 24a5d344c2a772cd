package router

import (
	"strconv"
	"strings"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// Per-request provider preferences, as OpenRouter's clients write them: a
// "provider" object in the body of chat completions, messages and
// responses, or the same JSON in the X-Firstbyte-Provider header (which
// wins). This file reads and checks them; preference_order.go applies them.

// HeaderProvider carries a request's provider preferences as JSON.
const HeaderProvider = "X-Firstbyte-Provider"

// Sorts a preference may ask for.
const (
	SortLatency    = "latency"    // p50 time to first byte, shortest first
	SortThroughput = "throughput" // p50 output tokens per second, highest first
	SortPrice      = "price"      // input + output USD per million tokens, cheapest first
	SortCompletion = "completion" // predicted time to the last token, shortest first
)

// boundQuantiles are the percentiles a preferred bound may name, in order.
var boundQuantiles = [...]struct {
	name string
	q    float64
}{{"p50", 0.5}, {"p75", 0.75}, {"p90", 0.9}, {"p99", 0.99}}

// bound is a preferred_max_latency (seconds) or preferred_min_throughput
// (tokens per second): a value per percentile of boundQuantiles.
type bound struct {
	v   [len(boundQuantiles)]float64
	has [len(boundQuantiles)]bool
	set bool
}

// preference is one request's preferences; the zero value asks nothing.
type preference struct {
	order, only, ignore []string
	noFallbacks         bool // allow_fallbacks: false
	sort                string
	maxLatency          bound
	minThroughput       bound
	maxPrompt, maxOut   float64 // max_price, USD per million tokens
	hasPrompt, hasOut   bool
	maxPrice            bool // max_price given (a target without pricing is then not eligible)
}

// preferenceError is a preference the client got wrong: the field, as
// the client wrote it (provider.order[1]), and what is wrong with it.
type preferenceError struct{ field, msg string }

// parsePreference reads a preference object. prefix names where it came
// from in errors ("provider" or the header's name).
func parsePreference(obj []byte, prefix string) (*preference, *preferenceError) {
	if len(obj) == 0 || obj[0] != '{' {
		return nil, &preferenceError{prefix, "must be a JSON object"}
	}
	p := &preference{}
	m := jsonscan.MembersOf(obj)
	for {
		name, val, ok := m.Next()
		if !ok {
			return p, nil
		}
		field := prefix + "." + string(name)
		if val[0] == 'n' { // null: as if absent
			continue
		}
		var err *preferenceError
		switch string(name) {
		case "order":
			p.order, err = names(val, field)
		case "only":
			p.only, err = names(val, field)
		case "ignore":
			p.ignore, err = names(val, field)
		case "allow_fallbacks":
			if val[0] != 't' && val[0] != 'f' {
				err = &preferenceError{field, "must be a boolean"}
			}
			p.noFallbacks = val[0] == 'f'
		case "sort":
			p.sort, err = sortOf(val, field)
		case "preferred_max_latency":
			p.maxLatency, err = boundOf(val, field)
		case "preferred_min_throughput":
			p.minThroughput, err = boundOf(val, field)
		case "max_price":
			err = p.priceOf(val, field)
		default:
			err = &preferenceError{field, "unknown field; valid: order, only, ignore, allow_fallbacks, sort, preferred_max_latency, preferred_min_throughput, max_price"}
		}
		if err != nil {
			return nil, err
		}
	}
}

// names reads an array of target names.
func names(val []byte, field string) ([]string, *preferenceError) {
	if val[0] != '[' {
		return nil, &preferenceError{field, "must be an array of target names"}
	}
	var out []string
	for i, el := range jsonscan.Each(val) {
		if el[0] != '"' {
			return nil, &preferenceError{field + "[" + strconv.Itoa(i) + "]", "must be a string"}
		}
		out = append(out, jsonscan.Unquote(el))
	}
	return out, nil
}

func sortOf(val []byte, field string) (string, *preferenceError) {
	if val[0] == '"' {
		switch s := jsonscan.Unquote(val); s {
		case SortLatency, SortThroughput, SortPrice, SortCompletion:
			return s, nil
		}
	}
	return "", &preferenceError{field, "must be one of latency, throughput, price, completion"}
}

// number reads a non-negative JSON number.
func number(val []byte, field string) (float64, *preferenceError) {
	if c := val[0]; c != '-' && (c < '0' || c > '9') {
		return 0, &preferenceError{field, "must be a number"}
	}
	v, err := strconv.ParseFloat(string(val), 64)
	if err != nil || v < 0 {
		return 0, &preferenceError{field, "must be a number, 0 or more"}
	}
	return v, nil
}

// boundOf reads a preferred bound: a number (the p50) or an object of
// p50/p75/p90/p99.
func boundOf(val []byte, field string) (bound, *preferenceError) {
	var b bound
	if val[0] != '{' {
		v, err := number(val, field)
		b.v[0], b.has[0], b.set = v, true, err == nil
		return b, err
	}
	m := jsonscan.MembersOf(val)
	for {
		name, v, ok := m.Next()
		if !ok {
			return b, nil
		}
		i := quantileIndex(string(name))
		if i < 0 {
			return b, &preferenceError{field + "." + string(name), "unknown field; valid: p50, p75, p90, p99"}
		}
		x, err := number(v, field+"."+string(name))
		if err != nil {
			return b, err
		}
		b.v[i], b.has[i], b.set = x, true, true
	}
}

func quantileIndex(name string) int {
	for i, q := range boundQuantiles {
		if q.name == name {
			return i
		}
	}
	return -1
}

func (p *preference) priceOf(val []byte, field string) *preferenceError {
	if val[0] != '{' {
		return &preferenceError{field, "must be an object of prompt and completion (USD per million tokens)"}
	}
	p.maxPrice = true
	m := jsonscan.MembersOf(val)
	for {
		name, v, ok := m.Next()
		if !ok {
			return nil
		}
		f := field + "." + string(name)
		var err *preferenceError
		switch string(name) {
		case "prompt":
			p.maxPrompt, err = number(v, f)
			p.hasPrompt = true
		case "completion":
			p.maxOut, err = number(v, f)
			p.hasOut = true
		default:
			err = &preferenceError{f, "unknown field; valid: prompt, completion"}
		}
		if err != nil {
			return err
		}
	}
}

// summary is the preferences in a few words for the request's log line
// and span: target names (configured ones: checked before) and numbers,
// never anything else the client wrote.
func (p *preference) summary() string {
	var b strings.Builder
	add := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + "=" + v)
	}
	for _, l := range []struct {
		k string
		v []string
	}{{"order", p.order}, {"only", p.only}, {"ignore", p.ignore}} {
		if len(l.v) > 0 {
			add(l.k, strings.Join(l.v, ","))
		}
	}
	if p.noFallbacks {
		add("allow_fallbacks", "false")
	}
	if p.sort != "" {
		add("sort", p.sort)
	}
	for _, bd := range []struct {
		k string
		b bound
	}{{"max_latency", p.maxLatency}, {"min_throughput", p.minThroughput}} {
		if bd.b.set {
			add(bd.k, bd.b.String())
		}
	}
	if p.maxPrice {
		var parts []string
		if p.hasPrompt {
			parts = append(parts, "prompt:"+strconv.FormatFloat(p.maxPrompt, 'g', -1, 64))
		}
		if p.hasOut {
			parts = append(parts, "completion:"+strconv.FormatFloat(p.maxOut, 'g', -1, 64))
		}
		add("max_price", strings.Join(parts, ","))
	}
	return b.String()
}

func (b bound) String() string {
	var parts []string
	for i, q := range boundQuantiles {
		if b.has[i] {
			parts = append(parts, q.name+":"+strconv.FormatFloat(b.v[i], 'g', -1, 64))
		}
	}
	return strings.Join(parts, ",")
}
