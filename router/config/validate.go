package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Validate reports every problem in c at once, or nil: what Parse
// could not decode (unknown keys, wrong types, keys written twice), unset
// ${VAR}s, and the semantic problems of everything that did decode. It
// expects a Config from Parse or Load (defaults applied).
func (c *Config) Validate() error {
	v := &validation{c: c, fromEnv: map[string]bool{}}
	v.errs = append(v.errs, c.decodeErrs...)
	v.errs = append(v.errs, c.unsetVars...)
	for _, e := range c.unsetVars {
		v.fromEnv[e.Path] = true
	}
	v.listeners()
	for i, k := range c.Auth.Keys {
		if k == "" {
			v.add(fmt.Sprintf("auth.keys[%d]", i), "must not be empty")
		}
	}
	v.limits()
	v.shutdownAndLog()
	v.providers()
	v.strategy()
	v.targets()
	v.aliasesAndRoutes()
	v.hostRoutes()
	v.telemetry()
	if len(v.errs) == 0 {
		return nil
	}
	return v.sorted()
}

// validation collects one Validate run's errors.
type validation struct {
	c    *Config
	errs FieldErrors
	// fromEnv are the fields whose ${VAR} was not set or empty: that error
	// is their one error.
	fromEnv map[string]bool
}

// add records a problem at path, unless path (or a field above it) could
// not be decoded, or its ${VAR} was not set or empty: that was reported
// already, and what the field holds instead (a zero value, a URL with a
// hole in it) would only repeat it as a second, confusing error.
func (v *validation) add(path, format string, args ...any) {
	v.record(FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// addAfter is add for a problem that follows from the one at cause (see
// FieldError.follows); an empty cause is add.
func (v *validation) addAfter(cause, path, format string, args ...any) {
	v.record(FieldError{Path: path, Msg: fmt.Sprintf(format, args...), follows: cause})
}

func (v *validation) record(e FieldError) {
	if v.c.broken(e.Path) || v.fromEnv[e.Path] {
		return
	}
	v.errs = append(v.errs, e)
}

// broken reports whether path or a field above it could not be decoded.
func (c *Config) broken(path string) bool {
	for p := path; p != ""; p = parentPath(p) {
		if c.undecoded[p] {
			return true
		}
	}
	return false
}

// brokenUnder reports whether a field whose path starts with prefix could
// not be decoded.
func (c *Config) brokenUnder(prefix string) bool {
	for p := range c.undecoded {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// written reports whether the file wrote the field at path.
func (c *Config) written(path string) bool {
	_, ok := c.positions[path]
	return ok
}

// parentPath strips the last segment: "targets[1].retry" → "targets[1]"
// → "targets" → "".
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// sorted puts the errors in file order: each gets the position of its
// field, or of the nearest field above it that the file wrote; ties and
// errors about nothing in the file keep the order they were found in.
func (v *validation) sorted() FieldErrors {
	for i := range v.errs {
		e := &v.errs[i]
		for p := e.Path; e.Line == 0 && p != ""; p = parentPath(p) {
			if pos, ok := v.c.positions[p]; ok {
				e.Line, e.Column = pos.Line, pos.Column
			}
		}
	}
	sort.SliceStable(v.errs, func(i, j int) bool {
		a, b := v.errs[i], v.errs[j]
		if (a.Line == 0) != (b.Line == 0) {
			return b.Line == 0
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return causesFirst(v.errs)
}

// unknownValue says a value is not one of valid, with a "did you mean"
// for a near miss, else the valid ones. The value is quoted only when it
// looks like a name (quoteName).
func unknownValue(what, got string, valid []string) string {
	if s := suggest(got, valid); s != "" {
		return fmt.Sprintf("unknown %s %s (did you mean %q?)", what, quoteName(got), s)
	}
	if len(valid) == 0 {
		return fmt.Sprintf("unknown %s %s (none is configured)", what, quoteName(got))
	}
	return fmt.Sprintf("unknown %s %s (want one of %s)", what, quoteName(got), strings.Join(valid, ", "))
}

func (v *validation) listeners() {
	c := v.c
	okAddr := func(path, addr string) bool {
		if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
			v.add(path, "invalid address %s (want host:port, e.g. 127.0.0.1:8080)", quoteName(addr))
			return false
		}
		return true
	}
	listenOK, adminOK := okAddr("listen", c.Listen), okAddr("admin.listen", c.Admin.Listen)
	if !listenOK || !adminOK {
		return
	}
	why, collide := listenersCollide(c.Listen, c.Admin.Listen)
	if !collide {
		return
	}
	// Put the error on the one the file wrote (the other may be a default).
	path, addr, other, otherAddr := "admin.listen", c.Admin.Listen, "listen", c.Listen
	if !c.written("admin.listen") {
		path, addr, other, otherAddr = other, otherAddr, path, addr
	}
	v.add(path, "%s collides with %s %s (%s): serve would fail with \"address already in use\"; give the two listeners different ports",
		addr, other, otherAddr, why)
}

func (v *validation) limits() {
	l := v.c.Limits
	if l.MaxBody < 0 {
		v.add("limits.max_body", "must be positive, got %d (leave it out for the default, %s)", l.MaxBody, ByteSize(DefaultMaxBody))
	}
	if l.MaxResponse < 0 {
		v.add("limits.max_response", "must be positive, got %d (leave it out for the default, %s)", l.MaxResponse, ByteSize(DefaultMaxResponse))
	}
	switch {
	case l.MaxBuffered < 0:
		v.add("limits.max_buffered", "must be positive, got %d (leave it out for the default, %s)", l.MaxBuffered, ByteSize(DefaultMaxBuffered))
	case l.MaxResponse > 0 && l.MaxBuffered < l.MaxResponse:
		v.add("limits.max_buffered", "%s is less than limits.max_response (%s): an answer that size could never be held; write at least %s, or leave it out",
			l.MaxBuffered, l.MaxResponse, l.MaxResponse)
	}
	if l.MaxConnections < 0 {
		v.add("limits.max_connections", "must be positive, got %d (leave it out for the default, %d)", l.MaxConnections, DefaultMaxConnections)
	}
	switch {
	case l.ReadTimeout < 0:
		v.add("limits.read_timeout", "must be positive, got %s (leave it out for the default, %s)", FormatDuration(l.ReadTimeout), FormatDuration(DefaultReadTimeout))
	case l.ReadTimeout < minReadTimeout:
		v.add("limits.read_timeout", "%s is too short to read a request: use at least %s (the default is %s)", FormatDuration(l.ReadTimeout), FormatDuration(minReadTimeout), FormatDuration(DefaultReadTimeout))
	}
	if l.IdleTimeout < 0 {
		v.add("limits.idle_timeout", "must be positive, got %s (leave it out for the default, %s)", FormatDuration(l.IdleTimeout), FormatDuration(DefaultIdleTimeout))
	}
}

// minReadTimeout is the shortest limits.read_timeout accepted: below it
// (usually a slip such as 60ms for 60s) ordinary clients would be cut off
// mid-request.
const minReadTimeout = time.Second

func (v *validation) shutdownAndLog() {
	c := v.c
	if c.Shutdown.Delay < 0 {
		v.add("shutdown.delay", "must be 0 or positive, got %s", FormatDuration(c.Shutdown.Delay))
	}
	if c.Shutdown.Grace < 0 {
		v.add("shutdown.grace", "must be positive, got %s (leave it out for the default, %s)", FormatDuration(c.Shutdown.Grace), FormatDuration(DefaultShutdownGrace))
	}
	if !slices.Contains(logLevels, c.Log.Level) {
		v.add("log.level", "%s", unknownValue("level", c.Log.Level, logLevels))
	}
	if !slices.Contains(logFormats, c.Log.Format) {
		v.add("log.format", "%s", unknownValue("format", c.Log.Format, logFormats))
	}
	if !slices.Contains(responseModels, c.ResponseModel) {
		v.add("response_model", "%s", unknownValue("response_model", c.ResponseModel, responseModels))
	}
}

func (v *validation) strategy() {
	mode := v.c.Strategy.Mode
	if !slices.Contains(Modes, mode) {
		v.add("strategy.mode", "%s", unknownValue("mode", mode, Modes))
	}
	v.hedge("strategy.hedge", v.c.Strategy.Hedge)
}

// hedge checks a hedge policy written at path.
func (v *validation) hedge(path string, h Hedge) {
	if _, _, err := ParseHedgeAfter(h.After); err != nil {
		v.add(path+".after", "%v", err)
	}
	if !(h.Budget > 0 && h.Budget <= 1) {
		v.add(path+".budget", "must be above 0 and at most 1 (a share of requests), got %g", h.Budget)
	}
	if h.Max < 1 || h.Max > 8 {
		v.add(path+".max", "must be 1 to 8 hedges in flight per request, got %d", h.Max)
	}
}

// HedgeFloor is the least strategy.hedge.after waits, whatever it says.
const HedgeFloor = 5 * time.Millisecond

// HedgeQuantiles are the quantiles strategy.hedge.after may name.
var HedgeQuantiles = map[string]float64{"p50": 0.5, "p75": 0.75, "p90": 0.9, "p95": 0.95, "p99": 0.99}

// HedgeAdaptive is the strategy.hedge.after that chooses each request's
// delay from the budget left and the targets' own distributions.
const HedgeAdaptive = "adaptive"

// ParseHedgeAfter reads strategy.hedge.after: a quantile ("p95": q is
// 0.95), a duration (d, at least HedgeFloor), or HedgeAdaptive (q and d
// both 0).
func ParseHedgeAfter(s string) (q float64, d time.Duration, err error) {
	if q, ok := HedgeQuantiles[s]; ok {
		return q, 0, nil
	}
	if s == HedgeAdaptive {
		return 0, 0, nil
	}
	if strings.HasPrefix(s, "p") {
		return 0, 0, fmt.Errorf("%s is not one of the quantiles p50, p75, p90, p95, p99, nor a duration (e.g. 300ms), nor adaptive", quoteName(s))
	}
	d, perr := time.ParseDuration(s)
	if perr != nil {
		if m := suggest(s, []string{HedgeAdaptive}); m != "" {
			return 0, 0, fmt.Errorf("%s is neither a quantile (e.g. p95), a duration (e.g. 300ms) nor adaptive (did you mean %q?)", quoteName(s), m)
		}
		return 0, 0, fmt.Errorf("%s is neither a quantile (e.g. p95), a duration (e.g. 300ms) nor adaptive", quoteName(s))
	}
	if d < HedgeFloor {
		return 0, 0, fmt.Errorf("%s is less than the floor of %s", s, HedgeFloor)
	}
	return 0, d, nil
}

func (v *validation) telemetry() {
	c := v.c
	if e := c.Telemetry.OTLPEndpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.add("telemetry.otlp_endpoint", "invalid URL %s (want http(s)://host:port, e.g. http://127.0.0.1:4318)", quoteName(e))
		}
	}
	in := c.Telemetry.Ingest
	if in.Enabled && in.Token == "" && !isLoopback(c.Admin.Listen) {
		v.add("telemetry.ingest.token", "required when ingest is enabled and admin.listen (%s) is not a loopback address: without it anyone who reaches that port can send spans that steer routing", c.Admin.Listen)
	}
	f := in.Foreign
	if f.Enabled && !in.Enabled {
		v.add("telemetry.ingest.foreign.enabled", "foreign spans arrive on the ingest endpoint: set telemetry.ingest.enabled: true too")
	}
	allowed := map[string]bool{}
	for i, s := range f.Services {
		if strings.TrimSpace(s) == "" {
			v.add("telemetry.ingest.foreign.services["+strconv.Itoa(i)+"]", "must not be empty")
		}
		allowed[s] = true
	}
	for i, s := range f.UnaryServices {
		path := "telemetry.ingest.foreign.unary_services[" + strconv.Itoa(i) + "]"
		switch {
		case strings.TrimSpace(s) == "":
			v.add(path, "must not be empty")
		case len(f.Services) > 0 && !allowed[s]:
			v.add(path, "%s is not in services, so its spans are never taken", quoteName(s))
		}
	}
}

// FormatDuration writes a duration as a config would: 30s, 2m, 10m, 1h30m
// (time.Duration.String says 10m0s).
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
