// The official Anthropic Node SDK against firstbyte: Messages unary and streaming,
// token counting, and the errors an application catches.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import Anthropic, { APIError, AuthenticationError, NotFoundError } from '@anthropic-ai/sdk';

import { key, models, routingHeaders, timeout, url } from './gateway.js';

// The SDK appends /v1/messages itself: the base URL is the gateway's origin.
const client = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0, timeout });
const messages = [{ role: 'user', content: 'Say hello.' }];
const max_tokens = 64;

const textOf = (message) =>
  message.content
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('');

test('messages.create: unary answer and routing headers', async () => {
  const { data, response } = await client.messages
    .create({ model: models.messages, max_tokens, messages })
    .withResponse();
  assert.equal(response.status, 200);
  assert.equal(data.type, 'message');
  assert.equal(data.role, 'assistant');
  assert.ok(textOf(data), 'text content is empty');
  assert.equal(data.stop_reason, 'end_turn');
  routingHeaders(assert, response.headers);
});

test('messages.create stream: true: events assemble the text and end with message_stop', async () => {
  const { data: stream, response } = await client.messages
    .create({ model: models.messages, max_tokens, messages, stream: true })
    .withResponse();
  assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  routingHeaders(assert, response.headers);
  const types = [];
  let text = '';
  for await (const event of stream) {
    types.push(event.type);
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
      text += event.delta.text;
    }
  }
  assert.equal(types[0], 'message_start');
  assert.equal(types.at(-1), 'message_stop');
  assert.ok(text.length > 0, 'no text deltas');
});

test('messages.stream helper: text events and finalMessage', async () => {
  const stream = client.messages.stream({ model: models.messages, max_tokens, messages });
  let deltas = '';
  stream.on('text', (delta) => {
    deltas += delta;
  });
  const final = await stream.finalMessage();
  assert.ok(textOf(final), 'final text is empty');
  assert.equal(textOf(final), deltas);
  assert.equal(final.stop_reason, 'end_turn');
});

test('messages.countTokens', async () => {
  const { data, response } = await client.messages
    .countTokens({ model: models.messages, messages })
    .withResponse();
  routingHeaders(assert, response.headers);
  assert.ok(Number.isInteger(data.input_tokens) && data.input_tokens > 0, `input_tokens = ${data.input_tokens}`);
});

test('unknown model: NotFoundError 404 in the Anthropic error shape', async () => {
  await assert.rejects(client.messages.create({ model: models.unknown, max_tokens, messages }), (err) => {
    assert.ok(err instanceof NotFoundError, `got ${err?.constructor?.name}: ${err}`);
    assert.equal(err.status, 404);
    // err.error is the parsed body: {"type":"error","error":{"type","message"}}.
    assert.equal(err.error?.type, 'error', `body = ${JSON.stringify(err.error)}`);
    assert.equal(err.error?.error?.type, 'not_found_error', `body = ${JSON.stringify(err.error)}`);
    assert.equal(err.type, 'not_found_error');
    assert.ok(err.error.error.message.includes(models.unknown), `message ${JSON.stringify(err.error.error.message)} does not name the model`);
    return true;
  });
});

test('unknown model, streaming: NotFoundError before any event', async () => {
  await assert.rejects(
    async () => {
      const stream = client.messages.stream({ model: models.unknown, max_tokens, messages });
      await stream.finalMessage();
    },
    (err) => {
      assert.ok(err instanceof NotFoundError, `got ${err?.constructor?.name}: ${err}`);
      assert.equal(err.type, 'not_found_error');
      return true;
    },
  );
});

test('wrong API key: AuthenticationError 401 in the Anthropic error shape', async () => {
  const wrong = new Anthropic({ baseURL: url, apiKey: `${key}-wrong`, maxRetries: 0, timeout });
  await assert.rejects(wrong.messages.create({ model: models.messages, max_tokens, messages }), (err) => {
    assert.ok(err instanceof AuthenticationError, `got ${err?.constructor?.name}: ${err}`);
    assert.equal(err.status, 401);
    assert.equal(err.type, 'authentication_error', `body = ${JSON.stringify(err.error)}`);
    return true;
  });
});

test(
  'stream broken after the first byte: text, then an APIError api_error',
  { skip: !models.brokenMessages && 'FIRSTBYTE_BROKEN_ANTHROPIC_MODEL is not set' },
  async () => {
    const stream = await client.messages.create({ model: models.brokenMessages, max_tokens, messages, stream: true });
    let text = '';
    await assert.rejects(
      async () => {
        for await (const event of stream) {
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
            text += event.delta.text;
          }
        }
      },
      (err) => {
        assert.ok(err instanceof APIError, `got ${err?.constructor?.name}: ${err}`);
        assert.equal(err.type, 'api_error', `error = ${JSON.stringify(err.error)}`);
        return true;
      },
    );
    assert.ok(text.length > 0, 'no text before the break: the gateway should have relayed the first events');
  },
);
