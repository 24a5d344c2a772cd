// An application that calls OpenAI-compatible providers directly (no
// gateway in between) with the official openai SDK, traced by
// @opentelemetry/instrumentation-openai: one CLIENT span per call, exported
// to the fleet's collector, which sends it on to every firstbyte gateway. A
// gateway with telemetry.ingest.foreign on learns each provider's latency
// from these spans before it has served anything.
//
// It makes FLEET_CALLS unary chat completions (default 15) at each provider
// of FLEET_PROVIDERS, in turns, then flushes its spans and prints what it
// measured itself as one JSON line:
//
//   FLEET_PROVIDERS='[{"name":"fast","base_url":"http://127.0.0.1:9101/v1","model":"gpt-4o-mini"}, ...]'
//   OTEL_SERVICE_NAME=checkout OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node app.cjs
//   {"service":"checkout","providers":{"fast":{"calls":15,"median_ms":21.4}, ...}}
//
// Any failed call fails the run (exit 1).

'use strict';

const telemetry = require('./telemetry.cjs'); // before openai: it wraps the client on load
const { OpenAI } = require('openai');

function config() {
  const raw = process.env.FLEET_PROVIDERS;
  if (!raw) {
    throw new Error('FLEET_PROVIDERS is not set: a JSON list of {"name", "base_url", "model"}');
  }
  const providers = JSON.parse(raw);
  if (!Array.isArray(providers) || providers.length === 0) {
    throw new Error(`FLEET_PROVIDERS = ${raw}: want a non-empty JSON list`);
  }
  for (const p of providers) {
    if (!p.name || !p.base_url || !p.model) {
      throw new Error(`FLEET_PROVIDERS entry ${JSON.stringify(p)}: want name, base_url and model`);
    }
  }
  const calls = Number(process.env.FLEET_CALLS || 15);
  if (!Number.isInteger(calls) || calls < 1) {
    throw new Error(`FLEET_CALLS = ${process.env.FLEET_CALLS}: want a positive integer`);
  }
  return { providers, calls };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function main() {
  const { providers, calls } = config();
  const clients = providers.map((p) => ({
    ...p,
    client: new OpenAI({ baseURL: p.base_url, apiKey: process.env.FLEET_API_KEY || 'app-key', maxRetries: 0, timeout: 10_000 }),
    took: [],
  }));
  // In turns, so every provider is measured over the same stretch of time.
  for (let i = 0; i < calls; i++) {
    for (const c of clients) {
      const start = performance.now();
      const answer = await c.client.chat.completions.create({
        model: c.model,
        messages: [{ role: 'user', content: 'Say hello.' }],
      });
      c.took.push(performance.now() - start);
      if (!answer.choices?.[0]?.message) {
        throw new Error(`${c.name}: answer without a message: ${JSON.stringify(answer)}`);
      }
    }
  }
  const summary = { service: process.env.OTEL_SERVICE_NAME || '', providers: {} };
  for (const c of clients) {
    summary.providers[c.name] = { calls: c.took.length, median_ms: Number(median(c.took).toFixed(1)) };
  }
  return summary;
}

main()
  .then(async (summary) => {
    await telemetry.shutdown();
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  })
  .catch(async (err) => {
    process.stderr.write(`fleet app: ${err?.stack ?? err}\n`);
    await telemetry.shutdown().catch(() => {});
    process.exitCode = 1;
  });
