// The Responses API on any target: the official OpenAI SDK's
// responses.create (unary, streamed, a function-call round trip) and the
// OpenAI Agents SDK running a tool-using agent, against a model that only
// an Anthropic-format provider serves (the gateway translates to Messages
// and back), and against one that only an OpenAI-compatible provider
// without the Responses API serves (translated to Chat Completions).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from '@openai/agents';
import OpenAI, { BadRequestError } from 'openai';

import { craftedSkip, key, models, routingHeaders, timeout, url } from './gateway.js';
import { weatherAgent } from './weather.js';

const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0, timeout });

const weather = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

// The Anthropic-only model is the simulated Anthropic provider's; the chat-only
// one the crafted OpenAI-compatible provider's (responses: false).
const pools = [{ by: 'an Anthropic-format provider only', model: models.messages, skip: false }];
if (models.craftedOpenAI) {
  pools.push({ by: 'an OpenAI-compatible provider without the Responses API', model: models.craftedOpenAI, skip: craftedSkip });
}

for (const { by, model, skip } of pools) {
  test(`responses.create, unary, served by ${by}`, { skip }, async () => {
    const { data, response } = await client.responses
      .create({ model, instructions: 'Be brief.', input: 'Say hello.', max_output_tokens: 200 })
      .withResponse();
    routingHeaders(assert, response.headers);
    assert.equal(data.object, 'response');
    assert.equal(data.status, 'completed');
    assert.ok(data.output_text.length > 0, `output_text ${JSON.stringify(data.output_text)}`);
    assert.ok(data.usage.input_tokens > 0 && data.usage.output_tokens > 0, `usage ${JSON.stringify(data.usage)}`);
  });

  test(`responses.create stream: the full event sequence in order, served by ${by}`, { skip }, async () => {
    const stream = await client.responses.create({ model, input: 'Say hello.', stream: true });
    const types = [];
    let text = '';
    let completed;
    for await (const event of stream) {
      types.push(event.type);
      assert.equal(event.sequence_number, types.length - 1, `sequence_number of ${event.type}`);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    assert.equal(completed?.output?.[0]?.content?.[0]?.text, text, 'response.completed repeats the text');
    const want = ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
      'response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed'];
    assert.deepEqual(types.filter((t, i) => t !== types[i - 1]), want);
    assert.ok(text.length > 0);
  });

  test(`responses.stream helper: finalResponse, served by ${by}`, { skip }, async () => {
    const stream = client.responses.stream({ model, input: 'Say hello.' });
    let deltas = '';
    stream.on('response.output_text.delta', (e) => {
      deltas += e.delta;
    });
    const final = await stream.finalResponse();
    assert.equal(final.output_text, deltas);
  });

  test(`responses function-call round trip, streamed then unary, served by ${by}`, { skip }, async () => {
    const input = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const stream = client.responses.stream({ model, input, tools: [weather] });
    const args = [];
    stream.on('response.function_call_arguments.done', (e) => args.push(e.arguments));
    const first = await stream.finalResponse();
    const call = first.output.find((item) => item.type === 'function_call');
    assert.equal(call?.name, 'get_weather');
    assert.equal(typeof JSON.parse(call.arguments), 'object');
    assert.deepEqual(args, [call.arguments]);

    const next = await client.responses.create({
      model,
      input: [...input, ...first.output, { type: 'function_call_output', call_id: call.call_id, output: '{"temperature":21}' }],
      tools: [weather],
    });
    assert.equal(next.status, 'completed');
    assert.ok(next.output_text.length > 0, 'no text after the function output');
    assert.ok(!next.output.some((item) => item.type === 'function_call'), 'called the tool again');
  });
}

test('previous_response_id with no provider that keeps responses: 400 naming the field', async () => {
  await assert.rejects(client.responses.create({ model: models.messages, previous_response_id: 'resp_123', input: 'And then?' }), (err) => {
    assert.ok(err instanceof BadRequestError, `got ${err?.constructor?.name}: ${err}`);
    assert.equal(err.param, 'previous_response_id');
    return true;
  });
});

test('the OpenAI Agents SDK runs a tool-using agent turn on an Anthropic-only pool', async () => {
  setTracingDisabled(true); // the SDK would export its traces to OpenAI with the key
  setDefaultOpenAIClient(new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0, timeout }));
  setOpenAIAPI('responses');
  const { agent, calls } = weatherAgent(models.messages);
  const result = await run(agent, 'What is the weather in Paris?');
  assert.equal(calls.length, 1, `tool calls ${JSON.stringify(calls)}`);
  assert.ok(typeof result.finalOutput === 'string' && result.finalOutput.length > 0, `final output ${JSON.stringify(result.finalOutput)}`);

  const streamed = await run(agent, 'And in Rome?', { stream: true });
  for await (const _ of streamed) {
    // drain: the agent calls the tool, then answers
  }
  await streamed.completed;
  assert.equal(calls.length, 2);
  assert.ok(streamed.finalOutput.length > 0);
});
