// One pool, either API: the official OpenAI and Anthropic Node SDKs, each
// against a model served by an OpenAI-format provider and one served by an
// Anthropic-format provider, unary and streaming, with tools. The gateway
// translates between the formats; the SDK's own parsing is the judge.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

import { key, models, routingHeaders, timeout, url } from './gateway.js';

const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0, timeout });
const anthropic = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0, timeout });

// The two models: served by an openai-kind target, and by an anthropic-kind one.
const served = [
  { by: 'an OpenAI-format provider', model: models.chat },
  { by: 'an Anthropic-format provider', model: models.messages },
];

const weatherTool = {
  name: 'get_weather',
  description: 'The weather in a city',
  schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const question = 'What is the weather in Paris?';

for (const { by, model } of served) {
  test(`openai chat.completions with tools, unary, served by ${by}`, async () => {
    const { data, response } = await openai.chat.completions
      .create({
        model,
        messages: [
          { role: 'system', content: 'Use the tools.' },
          { role: 'user', content: question },
        ],
        tools: [{ type: 'function', function: { name: weatherTool.name, description: weatherTool.description, parameters: weatherTool.schema } }],
      })
      .withResponse();
    routingHeaders(assert, response.headers);
    assert.equal(data.object, 'chat.completion');
    const choice = data.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    const call = choice.message.tool_calls?.[0];
    assert.equal(call?.function?.name, weatherTool.name);
    assert.ok(typeof JSON.parse(call.function.arguments) === 'object', 'arguments are not a JSON object');
    assert.ok(data.usage?.prompt_tokens > 0 && data.usage?.completion_tokens > 0, `usage = ${JSON.stringify(data.usage)}`);

    // The tool's result goes back; the answer is text.
    const next = await openai.chat.completions.create({
      model,
      messages: [
        { role: 'user', content: question },
        choice.message,
        { role: 'tool', tool_call_id: call.id, content: '{"temperature":21}' },
      ],
      tools: [{ type: 'function', function: { name: weatherTool.name, parameters: weatherTool.schema } }],
    });
    assert.equal(next.choices[0].finish_reason, 'stop');
    assert.ok(next.choices[0].message.content, 'no text after the tool result');
  });

  test(`openai chat.completions with tools, streaming, served by ${by}`, async () => {
    const stream = openai.chat.completions.stream({
      model,
      messages: [{ role: 'user', content: question }],
      tools: [{ type: 'function', function: { name: weatherTool.name, parameters: weatherTool.schema } }],
      stream_options: { include_usage: true },
    });
    const final = await stream.finalChatCompletion();
    const call = final.choices[0].message.tool_calls?.[0];
    assert.equal(call?.function?.name, weatherTool.name);
    assert.ok(typeof JSON.parse(call.function.arguments) === 'object');
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
    assert.ok(final.usage?.total_tokens > 0, `usage = ${JSON.stringify(final.usage)}`);
  });

  test(`openai chat.completions text stream, served by ${by}`, async () => {
    let content = '';
    let chunks = 0;
    const stream = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello.' }], stream: true });
    for await (const chunk of stream) {
      chunks++;
      content += chunk.choices[0]?.delta?.content ?? '';
    }
    assert.ok(chunks > 1 && content.length > 0, `${chunks} chunks, content ${JSON.stringify(content)}`);
  });

  test(`anthropic messages with tools, unary, served by ${by}`, async () => {
    const { data, response } = await anthropic.messages
      .create({
        model,
        max_tokens: 256,
        system: 'Use the tools.',
        messages: [{ role: 'user', content: question }],
        tools: [{ name: weatherTool.name, description: weatherTool.description, input_schema: weatherTool.schema }],
      })
      .withResponse();
    routingHeaders(assert, response.headers);
    assert.equal(data.type, 'message');
    assert.equal(data.stop_reason, 'tool_use');
    const use = data.content.find((b) => b.type === 'tool_use');
    assert.equal(use?.name, weatherTool.name);
    assert.equal(typeof use.input, 'object');
    assert.ok(data.usage.input_tokens > 0 && data.usage.output_tokens > 0, `usage = ${JSON.stringify(data.usage)}`);

    const next = await anthropic.messages.create({
      model,
      max_tokens: 256,
      messages: [
        { role: 'user', content: question },
        { role: 'assistant', content: data.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '{"temperature":21}' }] },
      ],
      tools: [{ name: weatherTool.name, input_schema: weatherTool.schema }],
    });
    assert.equal(next.stop_reason, 'end_turn');
    assert.ok(next.content.some((b) => b.type === 'text' && b.text), 'no text after the tool result');
  });

  test(`anthropic messages with tools, streaming, served by ${by}`, async () => {
    const stream = anthropic.messages.stream({
      model,
      max_tokens: 256,
      messages: [{ role: 'user', content: question }],
      tools: [{ name: weatherTool.name, input_schema: weatherTool.schema }],
    });
    const final = await stream.finalMessage();
    const use = final.content.find((b) => b.type === 'tool_use');
    assert.equal(use?.name, weatherTool.name);
    assert.equal(typeof use.input, 'object');
    assert.equal(final.stop_reason, 'tool_use');
    assert.ok(final.usage.output_tokens > 0, `usage = ${JSON.stringify(final.usage)}`);
  });

  test(`anthropic messages with an image, served by ${by}`, async () => {
    // A 1x1 PNG.
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const data = await anthropic.messages.create({
      model,
      max_tokens: 64,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }, { type: 'text', text: 'What is this?' }] }],
    });
    const text = data.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
    assert.match(text, /1 image/, `answer ${JSON.stringify(text)} does not say it saw the image`);
  });
}
