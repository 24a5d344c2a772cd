// Where the gateway under test is and what it serves, read once from the
// environment. The Go test in ../go sets these; to run against your own
// gateway, set them yourself (see ../README.md).

const required = (name) => {
  const v = process.env[name];
  if (!v) {
    throw new Error(
      `${name} is not set: point it at a running firstbyte gateway ` +
        '(FIRSTBYTE_URL=http://127.0.0.1:PORT, FIRSTBYTE_KEY=one of its auth.keys), ' +
        'or run the whole suite with `cd examples/clients/go && FIRSTBYTE_BIN=... go test ./...`',
    );
  }
  return v;
};

/** The gateway's client API origin, e.g. http://127.0.0.1:8080 (no /v1, no trailing slash). */
export const url = required('FIRSTBYTE_URL').replace(/\/+$/, '');
/** A key from the gateway's auth.keys. */
export const key = required('FIRSTBYTE_KEY');

/** Client-facing models the gateway serves, one per API family. */
export const models = {
  chat: process.env.FIRSTBYTE_OPENAI_MODEL || 'llama-3.3-70b',
  embedding: process.env.FIRSTBYTE_EMBEDDING_MODEL || 'text-embedding-3-small',
  messages: process.env.FIRSTBYTE_ANTHROPIC_MODEL || 'claude-sonnet',
  unknown: 'no-such-model-firstbyte-test',
  // Optional: models whose only target breaks every answer after a few chunks
  // (the Go test serves them from a simulated provider with cut_after). The
  // tests that need them are skipped when these are unset.
  brokenChat: process.env.FIRSTBYTE_BROKEN_OPENAI_MODEL || '',
  brokenMessages: process.env.FIRSTBYTE_BROKEN_ANTHROPIC_MODEL || '',
  // Optional: models served by the crafted upstreams of the Go test
  // (../go/crafted_test.go), which answer what real providers answer and a
  // simulation does not, and refuse what the real ones refuse. mixed is
  // served by both (the order header picks each turn's target); the other
  // two by one each. The tests that need them are skipped when unset.
  mixed: process.env.FIRSTBYTE_MIXED_MODEL || '',
  craftedAnthropic: process.env.FIRSTBYTE_CRAFTED_ANTHROPIC_MODEL || '',
  craftedOpenAI: process.env.FIRSTBYTE_CRAFTED_OPENAI_MODEL || '',
  // Optional: models served only by a Bedrock Converse or a Gemini upstream
  // (the Go test serves them from simulated hosts), and ones whose streams
  // break mid-answer. Their tests are skipped when unset.
  converse: process.env.FIRSTBYTE_CONVERSE_MODEL || '',
  gemini: process.env.FIRSTBYTE_GEMINI_MODEL || '',
  brokenConverse: process.env.FIRSTBYTE_BROKEN_CONVERSE_MODEL || '',
  brokenGemini: process.env.FIRSTBYTE_BROKEN_GEMINI_MODEL || '',
};

/** The targets of the crafted upstreams, for X-Firstbyte-Provider-Order. */
export const crafted = { anthropic: 'crafted-anthropic', openai: 'crafted-openai' };

/** The models the crafted upstreams say answered. */
export const craftedUpstreamModels = { anthropic: 'claude-sonnet-4-5-20250929', openai: 'kimi-k2-instruct-0905' };

/** Why the crafted tests are skipped ('' : they run). */
export const craftedSkip = !models.mixed && 'FIRSTBYTE_MIXED_MODEL is not set (the crafted upstreams of ../go serve it)';

/**
 * A second gateway in front of the same upstreams with response_model:
 * requested (optional: unset, its tests are skipped).
 */
export const requested = { url: (process.env.FIRSTBYTE_REQUESTED_URL || '').replace(/\/+$/, ''), key: process.env.FIRSTBYTE_REQUESTED_KEY || '' };

/** Request options that send a request to the named targets first. */
export const via = (...targets) => ({ headers: { 'X-Firstbyte-Provider-Order': targets.join(',') } });


/** Every value X-Firstbyte-Selection may take. */
export const selections = ['cold', 'leader', 'explore', 'order', 'manual'];

/** Each request gets this long; the simulated upstreams answer in milliseconds. */
export const timeout = 15_000;

/**
 * routingHeaders asserts the three routing headers every answered request carries
 * and returns them.
 */
export function routingHeaders(assert, headers) {
  const target = headers.get('x-firstbyte-target');
  const attempts = headers.get('x-firstbyte-attempts');
  const selection = headers.get('x-firstbyte-selection');
  assert.ok(target, 'x-firstbyte-target is missing or empty');
  assert.match(attempts ?? '', /^[1-9][0-9]*$/, `x-firstbyte-attempts = ${attempts}, want a positive integer`);
  assert.ok(selections.includes(selection), `x-firstbyte-selection = ${selection}, want one of ${selections}`);
  return { target, attempts: Number(attempts), selection };
}
