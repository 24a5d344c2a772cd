package router

import (
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
)

// unbuilt are modes the product names that this version does not have
// yet: cost-optimized needs prices in the config.
var unbuilt = map[string]bool{}

// FieldError is one configuration problem, named by its field path
// (targets[2].virtual_key) so a user can find it in the file.
type FieldError struct {
	Path string
	Msg  string
}

func (e FieldError) Error() string { return e.Path + ": " + e.Msg }

// FieldErrors is every problem Validate found, in file order.
type FieldErrors []FieldError

func (es FieldErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Validate reports every problem in c at once, or nil. It expects a Config
// from ParseConfig or LoadConfig (defaults applied).
func (c *Config) Validate() error {
	var errs FieldErrors
	add := func(path, format string, args ...any) {
		errs = append(errs, FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	errs = append(errs, c.unsetVars...)

	checkListen := func(path, addr string) {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			add(path, "invalid address %q (want host:port)", addr)
		}
	}
	checkListen("listen", c.Listen)
	checkListen("admin.listen", c.Admin.Listen)
	for i, k := range c.Auth.Keys {
		if k == "" {
			add(fmt.Sprintf("auth.keys[%d]", i), "must not be empty")
		}
	}
	if c.Limits.MaxBody < 0 {
		add("limits.max_body", "invalid size (want e.g. 10MiB, 512KiB or a byte count)")
	}

	if len(c.Providers) == 0 {
		add("providers", "at least one provider is required")
	}
	names := make([]string, 0, len(c.Providers))
	for name := range c.Providers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := c.Providers[name]
		path := "providers." + name
		if p == nil {
			add(path, "must be a mapping with kind and base_url")
			continue
		}
		if p.Kind != KindOpenAI && p.Kind != KindAnthropic {
			add(path+".kind", "unknown kind %q (want openai or anthropic)", p.Kind)
		}
		if p.BaseURL == "" {
			add(path+".base_url", "required")
		} else if u, err := url.Parse(p.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add(path+".base_url", "invalid URL %q (want http(s)://host/path)", p.BaseURL)
		}
		for i, m := range p.Models {
			if strings.TrimSpace(m) == "" {
				add(fmt.Sprintf("%s.models[%d]", path, i), "must not be empty")
			}
		}
		if p.Timeout.FirstByte < 0 {
			add(path+".timeout.first_byte", "must be positive")
		}
		if p.Timeout.Total < 0 {
			add(path+".timeout.total", "must be positive")
		}
		if p.Timeout.FirstByte > 0 && p.Timeout.Total > 0 && p.Timeout.FirstByte > p.Timeout.Total {
			add(path+".timeout.first_byte", "%s exceeds timeout.total %s", p.Timeout.FirstByte, p.Timeout.Total)
		}
		if p.MaxConcurrency < 0 {
			add(path+".max_concurrency", "must be 0 (unlimited) or positive")
		}
		if p.Queue < 0 {
			add(path+".queue", "must be 0 or positive")
		}
		if p.CircuitBreaker.Failures < 0 {
			add(path+".circuit_breaker.failures", "must be positive")
		}
		if p.CircuitBreaker.Cooldown < 0 {
			add(path+".circuit_breaker.cooldown", "must be positive")
		}
	}

	if e := c.Telemetry.OTLPEndpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("telemetry.otlp_endpoint", "invalid URL %q (want http(s)://host:port, e.g. http://127.0.0.1:4318)", e)
		}
	}
	if _, ok := strategies[c.Strategy.Mode]; !ok {
		if unbuilt[c.Strategy.Mode] {
			add("strategy.mode", "mode %q is specified but not built yet (available: %s)", c.Strategy.Mode, strings.Join(StrategyNames(), ", "))
		} else {
			add("strategy.mode", "unknown mode %q (want one of %s)", c.Strategy.Mode, strings.Join(StrategyNames(), ", "))
		}
	}

	if len(c.Targets) == 0 {
		add("targets", "at least one target is required")
	}
	for i, t := range c.Targets {
		path := fmt.Sprintf("targets[%d]", i)
		p, ok := c.Providers[t.VirtualKey]
		switch {
		case t.VirtualKey == "":
			add(path+".virtual_key", "required")
		case !ok:
			add(path+".virtual_key", "unknown provider %q", t.VirtualKey)
		}
		if t.Retry.Attempts < 0 {
			add(path+".retry.attempts", "must be 0 or positive, got %d", t.Retry.Attempts)
		}
		if w := t.weight(); w < 0 {
			add(path+".weight", "must be 0 or positive, got %g", w)
		}
		mapKeys := make([]string, 0, len(t.ModelMap))
		for k := range t.ModelMap {
			mapKeys = append(mapKeys, k)
		}
		sort.Strings(mapKeys)
		for _, k := range mapKeys {
			if strings.TrimSpace(k) == "" {
				add(path+".model_map", "empty client model name")
			} else if strings.TrimSpace(t.ModelMap[k]) == "" {
				add(path+".model_map."+k, "empty upstream model")
			}
		}
		if ok && p != nil && len(t.ModelMap) == 0 && len(p.Models) == 0 {
			add(path, "serves no model: give it a model_map or list models on provider %q", t.VirtualKey)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}
