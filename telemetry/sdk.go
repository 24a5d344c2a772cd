package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// Options configure the SDK.
type Options struct {
	// ServiceName is service.name unless OTEL_SERVICE_NAME or
	// OTEL_RESOURCE_ATTRIBUTES says otherwise. Zero: firstbyte.
	ServiceName string
	// ServiceVersion is service.version.
	ServiceVersion string
	// InstanceID is service.instance.id. Zero: a random one per process, so
	// peers can tell this instance's spans from their own.
	InstanceID string
	// OTLPEndpoint is the OTLP/HTTP base URL (…:4318); /v1/traces is added
	// unless present. Zero: OTEL_EXPORTER_OTLP_ENDPOINT /
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; neither: no export.
	OTLPEndpoint string
	// Aggregator receives every ended CLIENT span (AttemptSpan: the
	// attempts), sampled for export or not, synchronously: what routing
	// learns must be learned before the attempt's answer leaves. Other
	// spans (the SERVER span of each request) are not converted on the
	// request's goroutine at all. Nil: none.
	Aggregator TracesConsumer
	// Observers receive every ended span, off the request path, on a
	// goroutine of the processor's own (the metrics derived from spans).
	// Nil: none.
	Observers TracesConsumer
	// OnDrop is told how many ended spans the asynchronous side dropped
	// because its queue was full. Nil: ignored.
	OnDrop func(spans int)
	// OnExportError is called with the number of spans a failed export
	// dropped (for firstbyte_export_failures_total). Nil: ignored.
	OnExportError func(spans int, err error)
	// Getenv reads the environment. Zero: os.Getenv.
	Getenv func(string) string
}

// SDK is the set-up tracer provider and what it was built with.
type SDK struct {
	TracerProvider *sdktrace.TracerProvider
	Resource       *resource.Resource
	InstanceID     string
	Exporting      bool // spans leave the process over OTLP
}

// Setup builds the tracer provider: a resource from the options and the
// OTEL_* environment, the aggregating processor first (so the tracker sees
// every attempt the moment it ends, and the metrics and the OTLP/HTTP export
// follow on its own goroutine), then, for gRPC or client TLS, a batching SDK
// exporter off the request path. It returns a shutdown func
// that flushes and stops everything, joining the errors.
func Setup(ctx context.Context, o Options) (*SDK, func(context.Context) error, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.ServiceName == "" {
		o.ServiceName = "firstbyte"
	}
	if o.InstanceID == "" {
		o.InstanceID = NewInstanceID()
	}
	// Later sources win: our defaults, then OTEL_RESOURCE_ATTRIBUTES, then
	// OTEL_SERVICE_NAME (which WithFromEnv handles in that order).
	res, err := resource.New(ctx,
		resource.WithAttributes(
			semconv.ServiceName(o.ServiceName),
			semconv.ServiceVersion(o.ServiceVersion),
			semconv.ServiceInstanceID(o.InstanceID),
		),
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("telemetry resource: %w", err)
	}
	if v, ok := res.Set().Value(semconv.ServiceInstanceIDKey); ok && v.AsString() != "" {
		o.InstanceID = v.AsString()
	}

	sampler, err := exportSampler(o.Getenv)
	if err != nil {
		return nil, nil, err
	}
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSampler(recordAlways{sampler}),
	}
	// OTLP/HTTP protobuf goes out from pdata (pdataExporter), converted on
	// the asynchronous side with the metrics; gRPC and custom TLS use the
	// SDK's exporters behind its batcher.
	var async teeConsumer
	if o.Observers != nil {
		async = append(async, o.Observers)
	}
	var pdataExp *pdataExporter
	var exporter sdktrace.SpanExporter
	if url, ok := pdataEndpoint(o); ok {
		onError := o.OnExportError
		if onError == nil {
			onError = func(int, error) {}
		}
		if pdataExp, err = newPdataExporter(url, o.Getenv, onError); err != nil {
			return nil, nil, err
		}
		async = append(async, pdataExp)
	} else if exporter, err = newExporter(ctx, o); err != nil {
		return nil, nil, err
	}
	var asyncConsumer TracesConsumer
	switch len(async) {
	case 0:
	case 1:
		asyncConsumer = async[0]
	default:
		asyncConsumer = async
	}
	if o.Aggregator != nil || asyncConsumer != nil {
		p := NewSplitProcessor(o.Aggregator, asyncConsumer, 0, o.OnDrop)
		p.ConsumerTakes = AttemptSpan
		opts = append(opts, sdktrace.WithSpanProcessor(p))
	}
	if exporter != nil {
		opts = append(opts, sdktrace.WithBatcher(exporter))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	sdk := &SDK{TracerProvider: tp, Resource: res, InstanceID: o.InstanceID, Exporting: exporter != nil || pdataExp != nil}
	// Shutdown exports what is queued. A collector that is down is not a
	// failed stop: export errors go to the OTel error handler and the
	// export-failure counter, not to the caller.
	shutdown := func(ctx context.Context) error {
		err := tp.Shutdown(ctx)
		if pdataExp != nil {
			if perr := pdataExp.Shutdown(ctx); perr != nil && ctx.Err() == nil {
				otel.Handle(perr)
			}
		}
		if err != nil && exporter != nil && ctx.Err() == nil {
			otel.Handle(err)
			return nil
		}
		return err
	}
	return sdk, shutdown, nil
}

// pdataEndpoint returns the OTLP/HTTP traces URL when export is on, over
// HTTP protobuf, without client TLS settings (those need the SDK exporter).
func pdataEndpoint(o Options) (string, bool) {
	protocol := o.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = o.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if protocol != "" && protocol != "http/protobuf" {
		return "", false
	}
	for _, v := range []string{"CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY"} {
		if o.Getenv("OTEL_EXPORTER_OTLP_"+v) != "" || o.Getenv("OTEL_EXPORTER_OTLP_TRACES_"+v) != "" {
			return "", false
		}
	}
	withPath := func(base string) string {
		base = strings.TrimRight(base, "/")
		if strings.HasSuffix(base, "/v1/traces") {
			return base
		}
		return base + "/v1/traces"
	}
	switch {
	case o.OTLPEndpoint != "":
		return withPath(o.OTLPEndpoint), true
	case o.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		return o.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), true
	case o.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		return withPath(o.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")), true
	}
	return "", false
}

// NewInstanceID returns a random service.instance.id.
func NewInstanceID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newExporter returns the OTLP exporter the options and environment ask
// for, or nil.
func newExporter(ctx context.Context, o Options) (sdktrace.SpanExporter, error) {
	endpoint := o.OTLPEndpoint
	fromEnv := o.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || o.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	if endpoint == "" && !fromEnv {
		return nil, nil
	}
	protocol := o.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = o.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch protocol {
	case "", "http/protobuf":
		var hopts []otlptracehttp.Option
		if endpoint != "" {
			if !strings.HasSuffix(strings.TrimRight(endpoint, "/"), "/v1/traces") {
				endpoint = strings.TrimRight(endpoint, "/") + "/v1/traces"
			}
			hopts = append(hopts, otlptracehttp.WithEndpointURL(endpoint))
		}
		exp, err = otlptracehttp.New(ctx, hopts...)
	case "grpc":
		var gopts []otlptracegrpc.Option
		if endpoint != "" {
			gopts = append(gopts, otlptracegrpc.WithEndpointURL(endpoint))
		}
		exp, err = otlptracegrpc.New(ctx, gopts...)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL: unsupported protocol %q (want http/protobuf or grpc)", protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry OTLP exporter: %w", err)
	}
	if o.OnExportError != nil {
		exp = countingExporter{SpanExporter: exp, onError: o.OnExportError}
	}
	return exp, nil
}

// countingExporter reports failed exports; the batcher already drops them
// without touching the request path.
type countingExporter struct {
	sdktrace.SpanExporter
	onError func(spans int, err error)
}

func (e countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		e.onError(len(spans), err)
	}
	return err
}

// recordAlways wraps the export sampler so that a span the sampler drops is
// still recorded (RecordOnly): the aggregating processor sees every span,
// while the batcher, which exports only sampled spans, sees the sampler's
// choice. Export sampling never hides an attempt from the tracker.
type recordAlways struct{ export sdktrace.Sampler }

func (s recordAlways) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	r := s.export.ShouldSample(p)
	if r.Decision == sdktrace.Drop {
		r.Decision = sdktrace.RecordOnly
	}
	return r
}

func (s recordAlways) Description() string { return "RecordAlways{" + s.export.Description() + "}" }

// exportSampler reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG as the
// SDK would (default parentbased_always_on).
func exportSampler(getenv func(string) string) (sdktrace.Sampler, error) {
	name := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER"))
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	ratio := 1.0
	if arg != "" {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG: want a ratio in [0,1], got %q", arg)
		}
		ratio = r
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), nil
	default:
		return nil, fmt.Errorf("OTEL_TRACES_SAMPLER: unsupported sampler %q", name)
	}
}
