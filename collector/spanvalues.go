package collector

import (
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Reading a span's values as the aggregator and the metrics take them:
// its duration, and attribute values that may come typed as numbers or
// strings.

// spanDuration is how long the span's attempt took (0 without both stamps).
func spanDuration(span ptrace.Span) time.Duration {
	start, end := span.StartTimestamp(), span.EndTimestamp()
	if start == 0 || end <= start {
		return 0
	}
	return time.Duration(end - start)
}

// number reads a numeric attribute: a double, or an int from a client that
// rounds (gen_ai.response.time_to_first_chunk is seconds as a double).
func number(v pcommon.Value) (float64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		return v.Double(), true
	case pcommon.ValueTypeInt:
		return float64(v.Int()), true
	default:
		return 0, false
	}
}

// statusCode reads http.response.status_code: an int per the conventions,
// or a string from clients that send it so. ok is false for anything else.
func statusCode(v pcommon.Value) (code int64, ok bool) {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int(), true
	case pcommon.ValueTypeStr:
		n, err := strconv.ParseInt(v.Str(), 10, 64)
		if err != nil {
			return 0, false
		}
		return n, true
	default:
		return 0, false
	}
}
