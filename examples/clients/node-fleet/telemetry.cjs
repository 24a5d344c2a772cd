// OpenTelemetry for an application that calls LLM providers directly: the
// OpenTelemetry JS SDK with the OpenTelemetry project's own OpenAI
// instrumentation, exporting OTLP (http/protobuf) to a collector. Require it
// before the openai package (first line of app.cjs, or `node --require
// ./telemetry.cjs`), so the instrumentation wraps the client when it is
// first loaded.
//
// Configured the standard way, from the environment:
//   OTEL_SERVICE_NAME                  the application's service.name (what a
//                                      gateway's telemetry.ingest.foreign
//                                      services / unary_services name)
//   OTEL_RESOURCE_ATTRIBUTES           more resource attributes
//   OTEL_EXPORTER_OTLP_ENDPOINT        the collector, e.g. http://127.0.0.1:4318
//                                      (the exporter appends /v1/traces)
//   OTEL_BSP_SCHEDULE_DELAY            how often spans are sent, ms (5000)
//
// It exports spans only: the instrumentation's metrics and message events
// go to the API's no-op providers.

'use strict';

const { OpenAIInstrumentation } = require('@opentelemetry/instrumentation-openai');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
const { defaultResource, detectResources, envDetector } = require('@opentelemetry/resources');
const { BatchSpanProcessor, NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');

const provider = new NodeTracerProvider({
  resource: defaultResource().merge(detectResources({ detectors: [envDetector] })),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
registerInstrumentations({ tracerProvider: provider, instrumentations: [new OpenAIInstrumentation()] });

// shutdown flushes the spans still queued: call it before the process exits.
module.exports = { shutdown: () => provider.shutdown() };
