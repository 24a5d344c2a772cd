// The official OpenAI Node SDK against firstbyte: every OpenAI-shaped endpoint the
// gateway serves, unary and streaming, and the errors an application catches.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import OpenAI, { APIError, AuthenticationError, InternalServerError, NotFoundError } from 'openai';

import { key, models, routingHeaders, timeout, url } from './gateway.js';

const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0, timeout });
const messages = [{ role: 'user', content: 'Say hello.' }];

test('chat.completions.create: unary answer and routing headers', async () => {
  const { data, response } = await client.chat.completions
    .create({ model: models.chat, messages })
    .withResponse();
  assert.equal(response.status, 200);
  assert.equal(data.object, 'chat.completion');
  assert.ok(data.choices[0].message.content, 'choices[0].message.content is empty');
  assert.equal(data.choices[0].finish_reason, 'stop');
  routingHeaders(assert, response.headers);
});

test('chat.completions.create: stream assembles the content and ends cleanly', async () => {
  const { data: stream, response } = await client.chat.completions
    .create({ model: models.chat, messages, stream: true, stream_options: { include_usage: true } })
    .withResponse();
  assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  routingHeaders(assert, response.headers);
  let content = '';
  let finish = null;
  let usage = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    assert.equal(chunk.object, 'chat.completion.chunk');
    for (const choice of chunk.choices) {
      content += choice.delta?.content ?? '';
      finish = choice.finish_reason ?? finish;
    }
    usage = chunk.usage ?? usage;
  }
  assert.ok(chunks > 1, `got ${chunks} chunks, want several`);
  assert.ok(content.length > 0, 'streamed content is empty');
  assert.equal(finish, 'stop');
  assert.ok(usage?.total_tokens > 0, `usage = ${JSON.stringify(usage)}, want total_tokens > 0`);
});

test('chat.completions.stream helper: finalChatCompletion', async () => {
  const runner = client.chat.completions.stream({ model: models.chat, messages });
  let deltas = '';
  runner.on('content', (delta) => {
    deltas += delta;
  });
  const final = await runner.finalChatCompletion();
  assert.ok(final.choices[0].message.content, 'final content is empty');
  assert.equal(final.choices[0].message.content, deltas);
});

test('X-Firstbyte-Provider-Order request header: selection manual', async () => {
  const first = await client.chat.completions.create({ model: models.chat, messages }).withResponse();
  const { target } = routingHeaders(assert, first.response.headers);
  const { response } = await client.chat.completions
    .create({ model: models.chat, messages }, { headers: { 'X-Firstbyte-Provider-Order': target } })
    .withResponse();
  const got = routingHeaders(assert, response.headers);
  assert.equal(got.selection, 'manual');
  assert.equal(got.target, target);
});

test('models.list contains the configured models', async () => {
  const ids = [];
  for await (const m of client.models.list()) {
    ids.push(m.id);
  }
  assert.ok(ids.includes(models.chat), `models.list() = ${ids}, want ${models.chat} in it`);
  assert.ok(ids.includes(models.embedding), `models.list() = ${ids}, want ${models.embedding} in it`);
});

test('embeddings.create with encoding_format float', async () => {
  const { data, response } = await client.embeddings
    .create({ model: models.embedding, input: ['first', 'second'], encoding_format: 'float' })
    .withResponse();
  routingHeaders(assert, response.headers);
  assert.equal(data.data.length, 2);
  for (const e of data.data) {
    assert.ok(e.embedding.length > 0, `embedding ${e.index} is empty`);
    assert.ok(e.embedding.every(Number.isFinite), `embedding ${e.index} has non-numbers`);
  }
});

// The SDK asks for encoding_format "base64" unless told otherwise and decodes
// the answer as little-endian float32. An upstream that ignores the field and
// sends a float array is decoded into garbage silently, so compare dimensions
// with an explicit float request.
test(
  'embeddings.create with the SDK default encoding (base64) decodes to the same dimensions',
  async () => {
    const floats = await client.embeddings.create({ model: models.embedding, input: 'hello', encoding_format: 'float' });
    const decoded = await client.embeddings.create({ model: models.embedding, input: 'hello' });
    assert.equal(decoded.data.length, 1);
    assert.equal(
      decoded.data[0].embedding.length,
      floats.data[0].embedding.length,
      `default (base64) request decoded to ${decoded.data[0].embedding.length} dimensions, float request has ${floats.data[0].embedding.length}`,
    );
  },
);

test('responses.create: unary output_text', async () => {
  const { data, response } = await client.responses
    .create({ model: models.chat, input: 'Say hello.' })
    .withResponse();
  routingHeaders(assert, response.headers);
  assert.equal(data.object, 'response');
  assert.equal(data.status, 'completed');
  assert.ok(data.output_text, 'output_text is empty');
});

test('responses.create: stream of events ends with response.completed', async () => {
  const stream = await client.responses.create({ model: models.chat, input: 'Say hello.', stream: true });
  let text = '';
  const types = [];
  for await (const event of stream) {
    types.push(event.type);
    if (event.type === 'response.output_text.delta') {
      text += event.delta;
    }
  }
  assert.equal(types[0], 'response.created');
  assert.equal(types.at(-1), 'response.completed');
  assert.ok(text.length > 0, 'no output_text deltas');
});

test('responses.stream helper: finalResponse', async () => {
  const stream = client.responses.stream({ model: models.chat, input: 'Say hello.' });
  const final = await stream.finalResponse();
  assert.equal(final.status, 'completed');
  assert.ok(final.output_text, 'final output_text is empty');
});

test('unknown model: NotFoundError 404 model_not_found', async () => {
  await assert.rejects(client.chat.completions.create({ model: models.unknown, messages }), (err) => {
    assert.ok(err instanceof NotFoundError, `got ${err?.constructor?.name}: ${err}`);
    assert.equal(err.status, 404);
    assert.equal(err.code, 'model_not_found');
    assert.ok(err.message.includes(models.unknown), `message ${JSON.stringify(err.message)} does not name the model`);
    return true;
  });
});

test('unknown model, streaming: NotFoundError before any chunk', async () => {
  await assert.rejects(client.chat.completions.create({ model: models.unknown, messages, stream: true }), (err) => {
    assert.ok(err instanceof NotFoundError, `got ${err?.constructor?.name}: ${err}`);
    assert.equal(err.code, 'model_not_found');
    return true;
  });
});

test('wrong API key: AuthenticationError 401', async () => {
  const wrong = new OpenAI({ baseURL: `${url}/v1`, apiKey: `${key}-wrong`, maxRetries: 0, timeout });
  for (const call of [
    () => wrong.chat.completions.create({ model: models.chat, messages }),
    () => wrong.models.list(),
  ]) {
    await assert.rejects(call(), (err) => {
      assert.ok(err instanceof AuthenticationError, `got ${err?.constructor?.name}: ${err}`);
      assert.equal(err.status, 401);
      return true;
    });
  }
});

const brokenSkip = !models.brokenChat && 'FIRSTBYTE_BROKEN_OPENAI_MODEL is not set';

test('stream broken after the first byte: chunks, then an APIError stream_interrupted', { skip: brokenSkip }, async () => {
  const stream = await client.chat.completions.create({ model: models.brokenChat, messages, stream: true });
  let content = '';
  await assert.rejects(
    async () => {
      for await (const chunk of stream) {
        content += chunk.choices[0]?.delta?.content ?? '';
      }
    },
    (err) => {
      assert.ok(err instanceof APIError, `got ${err?.constructor?.name}: ${err}`);
      assert.equal(err.code, 'stream_interrupted', `error = ${JSON.stringify(err.error)}`);
      return true;
    },
  );
  assert.ok(content.length > 0, 'no content before the break: the gateway should have relayed the first chunks');
});

test('responses stream broken after the first byte: an APIError', { skip: brokenSkip }, async () => {
  const stream = await client.responses.create({ model: models.brokenChat, input: 'Say hello.', stream: true });
  const types = [];
  await assert.rejects(
    async () => {
      for await (const event of stream) {
        types.push(event.type);
      }
    },
    (err) => {
      assert.ok(err instanceof APIError, `got ${err?.constructor?.name}: ${err}`);
      return true;
    },
  );
  assert.equal(types[0], 'response.created');
  assert.ok(!types.includes('response.completed'), `events = ${types}`);
});

test('unary answer broken: InternalServerError 502 all_targets_failed with routing headers', { skip: brokenSkip }, async () => {
  await assert.rejects(client.chat.completions.create({ model: models.brokenChat, messages }), (err) => {
    assert.ok(err instanceof InternalServerError, `got ${err?.constructor?.name}: ${err}`);
    assert.equal(err.status, 502);
    assert.equal(err.code, 'all_targets_failed');
    routingHeaders(assert, err.headers);
    return true;
  });
});
