// The OpenAI Agents SDK (@openai/agents) running a tool-using agent against
// models served only by a Bedrock Converse and only by a Gemini upstream:
// the SDK speaks the Responses API or Chat Completions, the gateway
// translates each turn into the upstream's format and each answer back.
// Each run is a tool call round trip (the model calls the tool, the SDK
// runs it and sends its output, the model answers in text), unary and
// streamed, through each of the SDK's two model classes.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { OpenAIChatCompletionsModel, OpenAIResponsesModel, run, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';

import { key, models, timeout, url } from './gateway.js';
import { weatherAgent } from './weather.js';

setTracingDisabled(true); // the SDK would export its traces to OpenAI with the key

const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0, timeout });

const upstreams = [
  { format: 'Bedrock Converse', model: models.converse },
  { format: 'Gemini', model: models.gemini },
];
const apis = [
  { api: 'Responses', modelFor: (name) => new OpenAIResponsesModel(client, name) },
  { api: 'Chat Completions', modelFor: (name) => new OpenAIChatCompletionsModel(client, name) },
];

// The simulated model calls the agent's only tool with each required
// property set to a plain value of its type ("example" for a string), and
// answers a turn that ends in a tool output with its fixed filler text.
const filler = /^The quick brown fox\b/;

// checkRun asserts a finished run: one tool call with the simulated
// arguments, its output sent back, the answer the filler text.
function checkRun(result, calls) {
  assert.deepEqual(calls, ['example'], 'the tool ran once, with the arguments the model sent');
  const items = result.newItems.map((i) => i.type);
  assert.deepEqual(items, ['tool_call_item', 'tool_call_output_item', 'message_output_item'], `items ${JSON.stringify(items)}`);
  const call = result.newItems[0].rawItem;
  assert.equal(call.name, 'get_weather');
  assert.deepEqual(JSON.parse(call.arguments), { city: 'example' });
  assert.ok(call.callId, 'the call has an id');
  assert.equal(result.newItems[1].rawItem.callId, call.callId, 'the output answers that call');
  assert.equal(typeof result.finalOutput, 'string');
  assert.match(result.finalOutput, filler);
  assert.equal(result.rawResponses.length, 2, 'two model turns: the call, then the answer');
  for (const r of result.rawResponses) assert.ok(r.usage.inputTokens > 0 && r.usage.outputTokens > 0, `usage ${JSON.stringify(r.usage)}`);
}

for (const { format, model } of upstreams) {
  for (const { api, modelFor } of apis) {
    const name = `the Agents SDK (${api}) runs a tool round trip, served by ${format}`;
    test(`${name}, unary`, { skip: !model && `no ${format} model` }, async () => {
      const { agent, calls } = weatherAgent(modelFor(model));
      const result = await run(agent, 'What is the weather in Paris?');
      checkRun(result, calls);
    });

    test(`${name}, streamed`, { skip: !model && `no ${format} model` }, async () => {
      const { agent, calls } = weatherAgent(modelFor(model));
      const result = await run(agent, 'What is the weather in Paris?', { stream: true });
      let text = '';
      const events = new Set();
      for await (const ev of result) {
        events.add(ev.type);
        if (ev.type === 'raw_model_stream_event' && ev.data.type === 'output_text_delta') text += ev.data.delta;
      }
      await result.completed;
      assert.ok(events.has('run_item_stream_event'), `events ${[...events]}`);
      checkRun(result, calls);
      assert.equal(text, result.finalOutput, 'the streamed text is the final output');
    });

    // Only the Responses API carries reasoning (and its signatures) back.
    if (api === 'Responses') {
      test(`the Agents SDK (${api}) keeps its reasoning across a tool loop (the signatures reach the upstream), served by ${format}`, { skip: !model && `no ${format} model` }, async () => {
        const { agent, calls } = weatherAgent(modelFor(model), { reasoning: { effort: 'low', summary: 'auto' } });
        const result = await run(agent, 'What is the weather in Paris?');
        assert.deepEqual(calls, ['example']);
        assert.ok(result.newItems.some((i) => i.type === 'reasoning_item'), `items ${result.newItems.map((i) => i.type)}`);
        // The simulated upstream verified the signature the first turn gave.
        assert.match(result.finalOutput, /^\[1 thought signature\(s\) verified\] The quick brown fox/);
      });
    }

    test(`the Agents SDK (${api}) runs two tools called at once, one without arguments, streamed, served by ${format}`, { skip: !model && `no ${format} model` }, async () => {
      const { agent, calls } = weatherAgent(modelFor(model));
      const times = [];
      agent.tools.push(tool({ name: 'now', description: 'The time', parameters: z.object({}), execute: async () => (times.push(1), '12:00') }));
      const result = await run(agent, 'sim:parallel What is the weather in Paris, and the time?', { stream: true });
      for await (const _ of result) {
        // drain: both tools run, then the model answers
      }
      await result.completed;
      assert.deepEqual(calls, ['example']);
      assert.equal(times.length, 1);
      const called = result.newItems.filter((i) => i.type === 'tool_call_item').map((i) => i.rawItem);
      assert.deepEqual(called.map((c) => c.name), ['get_weather', 'now']);
      assert.deepEqual(called.map((c) => JSON.parse(c.arguments)), [{ city: 'example' }, {}]);
      assert.notEqual(called[0].callId, called[1].callId);
      const answered = result.newItems.filter((i) => i.type === 'tool_call_output_item').map((i) => i.rawItem.callId);
      assert.deepEqual(answered, called.map((c) => c.callId), 'each call got its output');
      assert.match(result.finalOutput, filler);
    });
  }
}
