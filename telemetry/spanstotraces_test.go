package telemetry

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The reference conversion the processor's pooled one is held to: many
// spans at once, grouped as the OTLP exporter groups them.

// SpansToTraces converts ended SDK spans to collector pdata, as the OTLP
// exporter would put them on the wire: spans that share a resource and an
// instrumentation scope are grouped under one ResourceSpans and ScopeSpans,
// in the order they first appear. Nil spans are skipped.
func SpansToTraces(spans []sdktrace.ReadOnlySpan) ptrace.Traces {
	td := ptrace.NewTraces()
	// A process has one resource and a handful of scopes, so linear searches
	// beat maps keyed by attribute sets, which are slow to hash.
	type resourceGroup struct {
		res *resource.Resource
		rs  ptrace.ResourceSpans
	}
	type scopeGroup struct {
		res   *resource.Resource
		scope instrumentation.Scope
		spans ptrace.SpanSlice
	}
	var (
		resources []resourceGroup
		scopes    []scopeGroup
	)
	for _, s := range spans {
		if s == nil {
			continue
		}
		res, scope := s.Resource(), s.InstrumentationScope()
		si := slices.IndexFunc(scopes, func(g scopeGroup) bool {
			return sameResource(g.res, res) && g.scope == scope
		})
		if si < 0 {
			ri := slices.IndexFunc(resources, func(g resourceGroup) bool { return sameResource(g.res, res) })
			if ri < 0 {
				rs := td.ResourceSpans().AppendEmpty()
				putResource(rs, res)
				resources = append(resources, resourceGroup{res: res, rs: rs})
				ri = len(resources) - 1
			}
			ss := resources[ri].rs.ScopeSpans().AppendEmpty()
			putScope(ss, scope)
			scopes = append(scopes, scopeGroup{res: res, scope: scope, spans: ss.Spans()})
			si = len(scopes) - 1
		}
		putSpan(scopes[si].spans.AppendEmpty(), s)
	}
	return td
}

// sameResource reports whether a and b describe the same entity, trying
// the cheap pointer comparison first: spans of one provider share theirs.
func sameResource(a, b *resource.Resource) bool {
	return a == b || a.Equivalent() == b.Equivalent()
}
