package sim

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// fieldErrors collects every problem of a config, each as "field.path: message".
type fieldErrors []error

func (fe *fieldErrors) add(path, format string, args ...any) {
	*fe = append(*fe, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
}

// Validate reports every problem, one "field.path: message" per line.
func (c *Config) Validate() error {
	var fe fieldErrors
	if len(c.Providers) == 0 {
		fe.add("providers", "at least one provider is required")
	}
	names := map[string]int{}
	ports := map[string]int{}
	for i, p := range c.Providers {
		path := fmt.Sprintf("providers[%d]", i)
		p.validate(path+".", &fe)
		if p.Name != "" {
			if j, dup := names[p.Name]; dup {
				fe.add(path+".name", "%q already used by providers[%d]", p.Name, j)
			} else {
				names[p.Name] = i
			}
		}
		// Port 0 asks for a free port, so only fixed ports can collide.
		if _, port, err := net.SplitHostPort(p.listen()); err == nil && port != "0" {
			if j, dup := ports[port]; dup {
				fe.add(path+".listen", "port %s already used by providers[%d]", port, j)
			} else {
				ports[port] = i
			}
		}
	}
	return errors.Join(fe...)
}

// Validate reports every problem of one provider, with field paths relative to it.
func (p *Provider) Validate() error {
	var fe fieldErrors
	p.validate("", &fe)
	return errors.Join(fe...)
}

func (p *Provider) validate(prefix string, fe *fieldErrors) {
	switch {
	case p.Name == "":
		fe.add(prefix+"name", "required")
	case !validName(p.Name):
		fe.add(prefix+"name", "%q: use letters, digits, '-', '_' or '.'", p.Name)
	}
	if err := checkLoopback(p.listen()); err != nil {
		fe.add(prefix+"listen", "%v", err)
	}
	for i, m := range p.Models {
		if m == "" {
			fe.add(fmt.Sprintf("%smodels[%d]", prefix, i), "must not be empty")
		}
	}
	if h := p.Host; h != nil && h.Kind != HostAzure && h.Kind != HostBedrock && h.Kind != HostVertex && h.Kind != HostGemini {
		fe.add(prefix+"host.kind", "%q: want azure, bedrock, vertex or gemini", h.Kind)
	}
	if h := p.Host; h != nil && h.Exception != nil {
		switch {
		case h.Kind != HostBedrock:
			fe.add(prefix+"host.exception", "only a bedrock host's streams carry exception frames")
		case h.Exception.Type == "":
			fe.add(prefix+"host.exception.type", "must not be empty (e.g. modelStreamErrorException)")
		case h.Exception.AfterEvents < 0:
			fe.add(prefix+"host.exception.after_events", "%d: must not be negative", h.Exception.AfterEvents)
		}
	}
	p.TTFB.validate(prefix+"ttfb.", fe)
	p.Stream.validate(prefix+"stream.", fe)
	p.Errors.validate(prefix+"errors.", fe)
	var last time.Duration
	for i, ph := range p.Phases {
		path := fmt.Sprintf("%sphases[%d].", prefix, i)
		switch {
		case ph.After <= 0:
			fe.add(path+"after", "must be > 0")
		case i > 0 && ph.After <= last:
			fe.add(path+"after", "must be later than phases[%d].after (%v)", i-1, last)
		}
		last = ph.After
		if ph.TTFB != nil {
			ph.TTFB.validate(path+"ttfb.", fe)
		}
		if ph.Stream != nil {
			ph.Stream.validate(path+"stream.", fe)
		}
		if ph.Errors != nil {
			ph.Errors.validate(path+"errors.", fe)
		}
	}
	if p.RateLimit != nil {
		p.RateLimit.validate(prefix+"rate_limit.", fe)
	}
	if p.MaxConcurrency < 0 {
		fe.add(prefix+"max_concurrency", "must be >= 0 (0: no limit)")
	}
	if p.PromptCache != nil {
		p.PromptCache.validate(prefix+"prompt_cache.", fe)
	}
	p.Spikes.validate(prefix+"spikes.", fe)
	if p.CutAfter < 0 {
		fe.add(prefix+"cut_after", "must be >= 0 (0: never)")
	}
	if sb := p.StatusBody; sb != nil {
		if sb.Status < 200 || sb.Status > 599 {
			fe.add(prefix+"status_body.status", "%d: must be between 200 and 599", sb.Status)
		}
		if p.ContextOverflow {
			fe.add(prefix+"context_overflow", "cannot be combined with status_body")
		}
	}
}

func (d Dist) validate(prefix string, fe *fieldErrors) {
	if d.Median < 0 {
		fe.add(prefix+"median", "must be >= 0")
	}
	// The negated comparison also rejects NaN.
	if !(d.Spread >= 0 && d.Spread <= maxSpread) {
		fe.add(prefix+"spread", "%v: must be between 0 and %v", d.Spread, maxSpread)
	}
}

func (p Pace) validate(prefix string, fe *fieldErrors) {
	if p.Chunks < 0 || p.Chunks > maxChunks {
		fe.add(prefix+"chunks", "%d: must be between 0 and %d (0: %d)", p.Chunks, maxChunks, DefaultChunks)
	}
	if p.Interval < 0 {
		fe.add(prefix+"interval", "must be >= 0")
	}
}

func (e ErrorRate) validate(prefix string, fe *fieldErrors) {
	if !(e.Rate >= 0 && e.Rate <= 1) {
		fe.add(prefix+"rate", "%v: must be between 0 and 1", e.Rate)
	}
	if e.Status != 0 && (e.Status < 400 || e.Status > 599) {
		fe.add(prefix+"status", "%d: must be an error status, 400 to 599", e.Status)
	}
	if e.After < 0 {
		fe.add(prefix+"after", "must be >= 0 (0: after the TTFB draw)")
	}
}

func (l *RateLimit) validate(prefix string, fe *fieldErrors) {
	if l.Requests < 0 {
		fe.add(prefix+"requests", "%d: must be >= 0 (0: no request limit)", l.Requests)
	}
	if l.Tokens < 0 {
		fe.add(prefix+"tokens", "%d: must be >= 0 (0: no token limit)", l.Tokens)
	}
	if l.Requests == 0 && l.Tokens == 0 {
		fe.add(prefix+"requests", "a rate limit needs requests or tokens (or both) above 0")
	}
	if l.Window < 0 {
		fe.add(prefix+"window", "must be >= 0 (0: %v)", DefaultRateWindow)
	}
	if l.RetryAfter < 0 {
		fe.add(prefix+"retry_after", "must be >= 0 (0: until the window ends)")
	}
	if l.After < 0 {
		fe.add(prefix+"after", "must be >= 0 (0: at once)")
	}
}

func validName(s string) bool {
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '-' || r == '_' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

// checkLoopback accepts host:port only when host is a loopback IP or "localhost".
// The simulator is a test fixture that answers anyone without credentials; on any
// other interface it would be an open service on the network.
func checkLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port on a loopback address, e.g. %s", addr, DefaultListen)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: bad port %q", addr, port)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q: only loopback addresses are allowed (127.0.0.1, ::1, localhost); the simulator must not be reachable from the network", addr)
	}
	return nil
}
