package preference

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// Per-request provider preferences, as OpenRouter's clients write them: a
// "provider" object in the body of chat completions, messages and
// responses, or the same JSON in the X-Firstbyte-Provider header (which
// wins). This file reads and checks them; order.go applies them.

// Header carries a request's provider preferences as JSON.
const Header = "X-Firstbyte-Provider"

// Of is a request's preferences: header's (Header) when it has one, else
// provider's, the body's provider object; nil when neither.
func Of(header http.Header, provider []byte) (*Preference, *Error) {
	if vs, ok := header[Header]; ok {
		v := []byte(strings.Join(vs, ","))
		if obj, valid := jsonscan.Valid(v); valid {
			return Parse(obj, Header)
		}
		return nil, &Error{Field: Header, Msg: "must be a JSON object"}
	}
	if provider == nil {
		return nil, nil
	}
	return Parse(provider, "provider")
}

// Sorts a preference may ask for.
const (
	sortLatency    = "latency"    // p50 time to first byte, shortest first
	sortThroughput = "throughput" // p50 output tokens per second, highest first
	sortPrice      = "price"      // input + output USD per million tokens, cheapest first
	sortCompletion = "completion" // predicted time to the last token, shortest first
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

// Preference is one request's preferences; the zero value asks nothing.
type Preference struct {
	order, only, ignore []string
	noFallbacks         bool // allow_fallbacks: false
	sort                string
	maxLatency          bound
	minThroughput       bound
	maxPrompt, maxOut   float64 // max_price, USD per million tokens
	hasPrompt, hasOut   bool
	maxPrice            bool   // max_price given (a target without pricing is then not eligible)
	sum                 string // summary(), once built
	raw                 []byte // the object as the client wrote it
}

// Error is a preference the client got wrong: the field, as the client
// wrote it (provider.order[1]), and what is wrong with it.
type Error struct{ Field, Msg string }

// fieldName is a member's path, built only for an error (a parse that
// goes well builds none).
type fieldName struct {
	parent    string
	name, sub []byte // sub: a member of name's object (nil: none)
}

func (f fieldName) String() string {
	if f.sub != nil {
		return f.parent + "." + string(f.name) + "." + string(f.sub)
	}
	return f.parent + "." + string(f.name)
}

func (f fieldName) child(name []byte) fieldName { return fieldName{f.parent, f.name, name} }

func (f fieldName) err(msg string) *Error { return &Error{f.String(), msg} }

// Parse reads a preference object. prefix names where it came from in
// errors ("provider" or the header's name).
func Parse(obj []byte, prefix string) (*Preference, *Error) {
	if len(obj) == 0 || obj[0] != '{' {
		return nil, &Error{prefix, "must be a JSON object"}
	}
	p := &Preference{raw: obj}
	m := jsonscan.MembersOf(obj)
	for {
		name, val, ok := m.Next()
		if !ok {
			return p, nil
		}
		if val[0] == 'n' { // null: as if absent
			continue
		}
		field := fieldName{parent: prefix, name: name}
		var err *Error
		switch string(name) {
		case "order":
			p.order, err = names(val, field)
		case "only":
			p.only, err = names(val, field)
		case "ignore":
			p.ignore, err = names(val, field)
		case "allow_fallbacks":
			if val[0] != 't' && val[0] != 'f' {
				err = field.err("must be a boolean")
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
			err = field.err("unknown field; valid: order, only, ignore, allow_fallbacks, sort, preferred_max_latency, preferred_min_throughput, max_price")
		}
		if err != nil {
			return nil, err
		}
	}
}

// names reads an array of target names.
func names(val []byte, field fieldName) ([]string, *Error) {
	if val[0] != '[' {
		return nil, field.err("must be an array of target names")
	}
	var out []string
	for i, el := range jsonscan.Each(val) {
		if el[0] != '"' {
			return nil, &Error{field.String() + "[" + strconv.Itoa(i) + "]", "must be a string"}
		}
		out = append(out, jsonscan.Unquote(el))
	}
	return out, nil
}

func sortOf(val []byte, field fieldName) (string, *Error) {
	if val[0] == '"' {
		switch s := jsonscan.Unquote(val); s {
		case sortLatency, sortThroughput, sortPrice, sortCompletion:
			return s, nil
		}
	}
	return "", field.err("must be one of latency, throughput, price, completion")
}

// number reads a non-negative JSON number.
func number(val []byte, field fieldName) (float64, *Error) {
	if c := val[0]; c != '-' && (c < '0' || c > '9') {
		return 0, field.err("must be a number")
	}
	v, err := strconv.ParseFloat(string(val), 64)
	if err != nil || v < 0 {
		return 0, field.err("must be a number, 0 or more")
	}
	return v, nil
}

// boundOf reads a preferred bound: a number (the p50) or an object of
// p50/p75/p90/p99.
func boundOf(val []byte, field fieldName) (bound, *Error) {
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
		sub := field.child(name)
		i := quantileIndex(string(name))
		if i < 0 {
			return b, sub.err("unknown field; valid: p50, p75, p90, p99")
		}
		x, err := number(v, sub)
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

func (p *Preference) priceOf(val []byte, field fieldName) *Error {
	if val[0] != '{' {
		return field.err("must be an object of prompt and completion (USD per million tokens)")
	}
	p.maxPrice = true
	m := jsonscan.MembersOf(val)
	for {
		name, v, ok := m.Next()
		if !ok {
			return nil
		}
		f := field.child(name)
		var err *Error
		switch string(name) {
		case "prompt":
			p.maxPrompt, err = number(v, f)
			p.hasPrompt = true
		case "completion":
			p.maxOut, err = number(v, f)
			p.hasOut = true
		default:
			err = f.err("unknown field; valid: prompt, completion")
		}
		if err != nil {
			return err
		}
	}
}

// Summary is the preferences in a few words for the request's log line
// and span: target names (configured ones: checked before) and numbers,
// never anything else the client wrote. A short object is its own summary
// (checked, it holds nothing else: known keys, configured names, numbers,
// booleans), else one is written out. Built once per request.
func (p *Preference) Summary() string {
	if p.sum != "" {
		return p.sum
	}
	if len(p.raw) <= maxRawSummary && !hasEscape(p.raw) {
		p.sum = string(p.raw)
		return p.sum
	}
	b := make([]byte, 0, 96)
	b = appendNames(b, "order", p.order)
	b = appendNames(b, "only", p.only)
	b = appendNames(b, "ignore", p.ignore)
	if p.noFallbacks {
		b = appendKey(b, "allow_fallbacks")
		b = append(b, "false"...)
	}
	if p.sort != "" {
		b = append(appendKey(b, "sort"), p.sort...)
	}
	b = p.maxLatency.appendTo(b, "max_latency")
	b = p.minThroughput.appendTo(b, "min_throughput")
	if p.maxPrice {
		b = appendKey(b, "max_price")
		if p.hasPrompt {
			b = strconv.AppendFloat(append(b, "prompt:"...), p.maxPrompt, 'g', -1, 64)
		}
		if p.hasOut {
			if p.hasPrompt {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(append(b, "completion:"...), p.maxOut, 'g', -1, 64)
		}
	}
	p.sum = string(b)
	return p.sum
}

// maxRawSummary is the longest preference object shown as it came.
const maxRawSummary = 256

// hasEscape reports whether b has a backslash or a control character (a
// newline, say) that a log line should not carry as it came.
func hasEscape(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c < ' ' {
			return true
		}
	}
	return false
}

func appendKey(b []byte, k string) []byte {
	if len(b) > 0 {
		b = append(b, ' ')
	}
	return append(append(b, k...), '=')
}

func appendNames(b []byte, k string, names []string) []byte {
	if len(names) == 0 {
		return b
	}
	b = appendKey(b, k)
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, n...)
	}
	return b
}

func (bd bound) appendTo(b []byte, k string) []byte {
	if !bd.set {
		return b
	}
	b = appendKey(b, k)
	sep := false
	for i, q := range boundQuantiles {
		if bd.has[i] {
			if sep {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(append(append(b, q.name...), ':'), bd.v[i], 'g', -1, 64)
			sep = true
		}
	}
	return b
}

// Sort is the sort the preferences ask for (sortLatency, ...), "" for the
// mode's order.
func (p *Preference) Sort() string { return p.sort }
