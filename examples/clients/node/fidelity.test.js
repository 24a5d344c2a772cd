// Translation fidelity, proved by the official SDKs: every way a mixed pool
// used to break an agent loop or change an answer's meaning, driven through
// the real gateway against crafted upstreams (../go/crafted_test.go) that
// answer what real providers answer and refuse what the real ones refuse.
// The upstream a turn goes to is picked with X-Firstbyte-Provider-Order;
// [scenario:NAME] in the prompt picks what the upstream answers.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import Anthropic, { APIError as AnthropicAPIError } from '@anthropic-ai/sdk';
import { jsonSchemaOutputFormat } from '@anthropic-ai/sdk/helpers/json-schema';
import OpenAI, { APIError, BadRequestError } from 'openai';

import { crafted, craftedSkip, craftedUpstreamModels, key, models, requested, timeout, url, via } from './gateway.js';

const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0, timeout });
const anthropic = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0, timeout });
const skip = craftedSkip;

const weatherSchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
const oWeather = { type: 'function', function: { name: 'get_weather', parameters: weatherSchema } };
const aWeather = { name: 'get_weather', input_schema: weatherSchema };
const user = (text) => ({ role: 'user', content: text });

/** The request body the upstream received, from an echo answer's text. */
const echoed = (text) => JSON.parse(text);

test('a streamed tool call without input: arguments "{}", and a strict tool parses', { skip }, async () => {
  const stream = openai.chat.completions.stream(
    {
      model: models.mixed,
      messages: [user('What time is it? [scenario:tool_no_args]')],
      tools: [{ type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {}, additionalProperties: false }, strict: true } }],
    },
    via(crafted.anthropic),
  );
  const final = await stream.finalChatCompletion();
  const call = final.choices[0].message.tool_calls?.[0];
  assert.equal(call?.function?.arguments, '{}');
  assert.deepEqual(call.function.parsed_arguments, {});
});

test('output_config.format to an OpenAI target: anthropic.messages.parse() gets its object', { skip }, async () => {
  const schema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: false };
  const message = await anthropic.messages.parse(
    { model: models.mixed, max_tokens: 100, messages: [user('2+2? [scenario:json]')], output_config: { format: jsonSchemaOutputFormat(schema) } },
    via(crafted.openai),
  );
  assert.deepEqual(message.parsed_output, { answer: 4 });
});

test('response_format json_schema to an Anthropic target: chat.completions.parse() gets its object', { skip }, async () => {
  const schema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: false };
  const data = await openai.chat.completions.parse({
    model: models.craftedAnthropic, // no other target to fall back on
    messages: [user('2+2? [scenario:json]')],
    response_format: { type: 'json_schema', json_schema: { name: 'sum', schema, strict: true } },
  });
  assert.deepEqual(data.choices[0].message.parsed, { answer: 4 });
});

test('strict on tools crosses both ways', { skip }, async () => {
  const a = await anthropic.messages.create(
    { model: models.mixed, max_tokens: 100, messages: [user('[scenario:echo]')], tools: [{ ...aWeather, strict: true }] },
    via(crafted.openai),
  );
  assert.equal(echoed(a.content[0].text).tools[0].function.strict, true);
  const o = await openai.chat.completions.create(
    { model: models.mixed, messages: [user('[scenario:echo]')], tools: [{ type: 'function', function: { ...oWeather.function, strict: true } }] },
    via(crafted.anthropic),
  );
  assert.equal(echoed(o.choices[0].message.content).tools[0].strict, true);
});

test('interleaved parallel calls: each block ends after its last delta (contentBlock has the whole input)', { skip }, async () => {
  const stream = anthropic.messages.stream(
    { model: models.mixed, max_tokens: 100, messages: [user('Paris and Rome? [scenario:parallel_interleaved]')], tools: [aWeather] },
    via(crafted.openai),
  );
  const blocks = [];
  stream.on('contentBlock', (b) => blocks.push(structuredClone(b)));
  const final = await stream.finalMessage();
  const inputs = blocks.filter((b) => b.type === 'tool_use').map((b) => b.input);
  assert.deepEqual(inputs, [{ city: 'Paris' }, { city: 'Rome' }]);
  assert.deepEqual(final.content.filter((b) => b.type === 'tool_use').map((b) => b.input), inputs);
});

test('a vLLM Kimi K2 tool id (functions.get_weather:0), then the next turn on an Anthropic target', { skip }, async () => {
  const turn1 = await anthropic.messages.create(
    { model: models.mixed, max_tokens: 100, messages: [user('Weather in Paris? [scenario:kimi_ids]')], tools: [aWeather] },
    via(crafted.openai),
  );
  const use = turn1.content.find((b) => b.type === 'tool_use');
  assert.match(use.id, /^[A-Za-z0-9_-]+$/);
  const turn2 = await anthropic.messages.create(
    {
      model: models.mixed,
      max_tokens: 100,
      messages: [user('Weather in Paris?'), { role: 'assistant', content: turn1.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] }],
      tools: [aWeather],
    },
    via(crafted.anthropic),
  );
  assert.equal(turn2.content[0].text, 'ok');
});

test('thinking on, a tool turn served by an OpenAI target, the next turn on an Anthropic target', { skip }, async () => {
  const thinking = { type: 'enabled', budget_tokens: 1024 };
  const turn1 = await anthropic.messages.create(
    { model: models.mixed, max_tokens: 2048, thinking, messages: [user('Weather in Paris? [scenario:kimi_ids]')], tools: [aWeather] },
    via(crafted.openai),
  );
  const use = turn1.content.find((b) => b.type === 'tool_use');
  const turn2 = await anthropic.messages.create(
    {
      model: models.mixed,
      max_tokens: 2048,
      thinking,
      messages: [user('Weather in Paris?'), { role: 'assistant', content: turn1.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] }],
      tools: [aWeather],
    },
    via(crafted.anthropic),
  );
  assert.equal(turn2.content[0].text, 'ok');
});

test('temperature with top_p reaches an Anthropic target as one of them, from either SDK', { skip }, async () => {
  const o = await openai.chat.completions.create({ model: models.mixed, temperature: 0.5, top_p: 0.9, messages: [user('hi')] }, via(crafted.anthropic));
  assert.equal(o.choices[0].message.content, 'ok');
  const a = await anthropic.messages.create({ model: models.mixed, max_tokens: 50, temperature: 0.5, top_p: 0.9, messages: [user('hi')] }, via(crafted.anthropic));
  assert.equal(a.content[0].text, 'ok');
});

test('parameters {} becomes an object input_schema', { skip }, async () => {
  const o = await openai.chat.completions.create(
    { model: models.mixed, messages: [user('hi')], tools: [{ type: 'function', function: { name: 'ping', parameters: {} } }] },
    via(crafted.anthropic),
  );
  assert.equal(o.choices[0].message.content, 'ok');
});

test('tool ids call.1 and call:1 stay two calls for an Anthropic target', { skip }, async () => {
  const call = (id) => ({ id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
  const o = await openai.chat.completions.create(
    {
      model: models.mixed,
      messages: [
        user('Weather twice?'),
        { role: 'assistant', content: null, tool_calls: [call('call.1'), call('call:1')] },
        { role: 'tool', tool_call_id: 'call.1', content: 'sunny' },
        { role: 'tool', tool_call_id: 'call:1', content: 'rainy' },
        user('[scenario:echo]'),
      ],
      tools: [oWeather],
    },
    via(crafted.anthropic),
  );
  const sent = echoed(o.choices[0].message.content);
  const ids = sent.messages[1].content.map((b) => b.id);
  const results = sent.messages[2].content.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id);
  assert.equal(new Set(ids).size, 2, `tool_use ids ${ids}`);
  assert.deepEqual(results, ids);
});

test('an OpenAI refusal is stop_reason refusal for an Anthropic client; an Anthropic refusal is a content filter stop, unary as streamed', { skip }, async () => {
  const a = await anthropic.messages.create({ model: models.mixed, max_tokens: 50, messages: [user('[scenario:refusal]')] }, via(crafted.openai));
  assert.equal(a.stop_reason, 'refusal');
  const stream = anthropic.messages.stream({ model: models.mixed, max_tokens: 50, messages: [user('[scenario:refusal]')] }, via(crafted.openai));
  assert.equal((await stream.finalMessage()).stop_reason, 'refusal');
  // Anthropic's refusal stop (its classifier stopped the answer) comes after
  // the text: a stream sends that text as content before it knows, so the
  // unary answer says the same (docs/translation.md, stop reasons).
  const o = await openai.chat.completions.create({ model: models.mixed, messages: [user('[scenario:refusal]')] }, via(crafted.anthropic));
  const os = await openai.chat.completions.stream({ model: models.mixed, messages: [user('[scenario:refusal]')] }, via(crafted.anthropic)).finalChatCompletion();
  for (const [how, c] of [['unary', o], ['stream', os]]) {
    assert.equal(c.choices[0].finish_reason, 'content_filter', how);
    assert.equal(c.choices[0].message.content, "I can't help with that.", how);
    assert.equal(c.choices[0].message.refusal ?? null, null, how);
  }
});

test('cache writes are shown to OpenAI clients, unary and streaming', { skip }, async () => {
  const o = await openai.chat.completions.create({ model: models.mixed, messages: [user('[scenario:cache_write]')] }, via(crafted.anthropic));
  assert.equal(o.usage.cache_creation_input_tokens, 1000);
  assert.equal(o.usage.prompt_tokens_details.cache_write_tokens, 1000);
  assert.equal(o.usage.prompt_tokens, 1020);
  const stream = openai.chat.completions.stream(
    { model: models.mixed, messages: [user('[scenario:cache_write]')], stream_options: { include_usage: true } },
    via(crafted.anthropic),
  );
  assert.equal((await stream.finalChatCompletion()).usage.cache_creation_input_tokens, 1000);
});

test('cache_control on OpenAI content parts reaches Anthropic', { skip }, async () => {
  const o = await openai.chat.completions.create(
    {
      model: models.mixed,
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'A long system prompt.', cache_control: { type: 'ephemeral' } }] },
        { role: 'user', content: [{ type: 'text', text: 'A long document. [scenario:echo]', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
      ],
    },
    via(crafted.anthropic),
  );
  const sent = echoed(o.choices[0].message.content);
  assert.deepEqual(sent.system[0].cache_control, { type: 'ephemeral' });
  assert.deepEqual(sent.messages[0].content[0].cache_control, { type: 'ephemeral', ttl: '1h' });
});

test('reasoning_effort becomes a thinking budget, and a thinking budget reasoning_effort', { skip }, async () => {
  const o = await openai.chat.completions.create({ model: models.mixed, reasoning_effort: 'medium', messages: [user('[scenario:echo]')] }, via(crafted.anthropic));
  const sent = echoed(o.choices[0].message.content);
  assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: 8192 });
  assert.ok(sent.max_tokens > 8192, `max_tokens ${sent.max_tokens} leaves no room for the answer`);
  const a = await anthropic.messages.create(
    { model: models.mixed, max_tokens: 10000, thinking: { type: 'enabled', budget_tokens: 8192 }, messages: [user('[scenario:echo]')] },
    via(crafted.openai),
  );
  assert.equal(echoed(a.content[0].text).reasoning_effort, 'medium');
});

test('the matched stop sequence crosses both ways', { skip }, async () => {
  const a = await anthropic.messages.create(
    { model: models.mixed, max_tokens: 50, stop_sequences: ['END'], messages: [user('Count. [scenario:stop_sequence]')] },
    via(crafted.openai),
  );
  assert.equal(a.stop_reason, 'stop_sequence');
  assert.equal(a.stop_sequence, 'END');
  const o = await openai.chat.completions.create({ model: models.mixed, stop: ['END'], messages: [user('Count. [scenario:stop_sequence]')] }, via(crafted.anthropic));
  assert.equal(o.choices[0].finish_reason, 'stop');
  assert.equal(o.choices[0].stop_reason, 'END');
});

test('a refused parameter is named in param', { skip }, async () => {
  await assert.rejects(
    openai.chat.completions.create({ model: models.craftedAnthropic, n: 2, messages: [user('hi')] }),
    (err) => {
      assert.ok(err instanceof BadRequestError, `got ${err?.constructor?.name}: ${err}`);
      assert.equal(err.param, 'n');
      assert.equal(err.code, 'unsupported_parameter');
      return true;
    },
  );
});

test('a malformed upstream chunk ends the stream with an error, never end_turn', { skip }, async () => {
  const stream = anthropic.messages.stream({ model: models.mixed, max_tokens: 50, messages: [user('[scenario:malformed]')] }, via(crafted.openai));
  await assert.rejects(stream.finalMessage(), (err) => {
    assert.ok(err instanceof AnthropicAPIError, `got ${err?.constructor?.name}: ${err}`);
    return true;
  });
});

test('tool_use.input that is not an object is a broken answer (502), not a 200', { skip }, async () => {
  await assert.rejects(
    openai.chat.completions.create({ model: models.craftedAnthropic, messages: [user('[scenario:bad_input]')], tools: [oWeather] }),
    (err) => {
      assert.ok(err instanceof APIError, `got ${err?.constructor?.name}: ${err}`);
      assert.equal(err.status, 502);
      return true;
    },
  );
});

test('answers name the upstream model that answered, translated ones included', { skip }, async () => {
  const o = await openai.chat.completions.create({ model: models.mixed, messages: [user('hi')] }, via(crafted.anthropic));
  assert.equal(o.model, craftedUpstreamModels.anthropic);
  const stream = anthropic.messages.stream({ model: models.mixed, max_tokens: 50, messages: [user('hi')] }, via(crafted.openai));
  assert.equal((await stream.finalMessage()).model, craftedUpstreamModels.openai);
  const r = await openai.responses.create({ model: models.craftedAnthropic, input: 'hi' });
  assert.equal(r.model, craftedUpstreamModels.anthropic);
});

const requestedSkip = (!requested.url && 'FIRSTBYTE_REQUESTED_URL is not set') || skip;

test('response_model: requested names the client model on every path', { skip: requestedSkip }, async () => {
  const o2 = new OpenAI({ baseURL: `${requested.url}/v1`, apiKey: requested.key, maxRetries: 0, timeout });
  const a2 = new Anthropic({ baseURL: requested.url, apiKey: requested.key, maxRetries: 0, timeout });
  // Relayed as it came (unary and streamed), and translated.
  assert.equal((await o2.chat.completions.create({ model: models.mixed, messages: [user('hi')] }, via(crafted.openai))).model, models.mixed);
  const chunks = await o2.chat.completions.create({ model: models.mixed, messages: [user('hi')], stream: true }, via(crafted.openai));
  for await (const chunk of chunks) {
    assert.equal(chunk.model, models.mixed);
  }
  assert.equal((await a2.messages.create({ model: models.mixed, max_tokens: 9, messages: [user('hi')] }, via(crafted.anthropic))).model, models.mixed);
  assert.equal((await a2.messages.stream({ model: models.mixed, max_tokens: 9, messages: [user('hi')] }, via(crafted.openai)).finalMessage()).model, models.mixed);
});
