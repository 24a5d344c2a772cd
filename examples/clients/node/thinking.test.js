// Thinking across turns with the Anthropic SDK against models served only
// by a Gemini and only by a Bedrock Converse upstream. The simulated hosts
// sign a thinking request's answer as the real models do (Gemini a
// thoughtSignature on the call it makes, Converse a signed reasoningContent
// block), refuse a next turn whose signature was altered (Gemini also one
// left off a thinking turn's call), and start the answer to a turn that
// carried them back whole with "[N thought signature(s) verified]". The
// client sends back the thinking blocks it got, as a tool loop does; the
// gateway must carry each signature to the upstream unchanged, on the part
// it came with.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import Anthropic, { BadRequestError } from '@anthropic-ai/sdk';
import OpenAI from 'openai';

import { key, models, timeout, url } from './gateway.js';

const anthropic = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0, timeout });
const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0, timeout });

const upstreams = [
  // Gemini's signatures are marked so that they go back to Gemini only
  // (docs/translation.md, thinking signatures across providers): the
  // thought summary comes first, then a block of its own holding the call's
  // signature.
  { format: 'Gemini', model: models.gemini, blocks: ['thinking', 'thinking', 'tool_use'], signature: /^gemini~/ },
  { format: 'Bedrock Converse', model: models.converse, blocks: ['thinking', 'tool_use'], signature: /^[A-Za-z0-9+/=]+$/ },
];

const thinking = { type: 'enabled', budget_tokens: 2048 };
const tools = [{ name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
const ask = [{ role: 'user', content: 'What is the weather in Paris?' }];

// next is the second turn: the first answer as it came, then the tool's result.
function next(first) {
  const use = first.content.find((b) => b.type === 'tool_use');
  return [...ask, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Sunny, 21 degrees.' }] }];
}

function checkFirst(first, blocks, signature) {
  assert.equal(first.stop_reason, 'tool_use');
  assert.deepEqual(first.content.map((b) => b.type), blocks, JSON.stringify(first.content));
  const thoughts = first.content.filter((b) => b.type === 'thinking');
  assert.ok(thoughts.some((b) => b.thinking === 'Thinking it over.'), `thinking text: ${JSON.stringify(thoughts)}`);
  for (const b of thoughts) assert.match(b.signature, signature);
  assert.deepEqual(first.content.find((b) => b.type === 'tool_use').input, { city: 'example' });
}

function checkAnswer(answer, signed) {
  assert.equal(answer.stop_reason, 'end_turn');
  const text = answer.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
  assert.match(text, new RegExp(`^\\[${signed} thought signature\\(s\\) verified\\] The quick brown fox`), `the upstream did not verify the signatures: ${JSON.stringify(text)}`);
}

for (const { format, model, blocks, signature } of upstreams) {
  const skip = !model && `no ${format} model`;
  const by = `served by ${format}`;
  // The Gemini signature is on the call (one); Converse's on the reasoning block (one).
  const signed = 1;

  test(`anthropic messages with thinking: a tool loop's second turn carries the thinking back, unary, ${by}`, { skip }, async () => {
    const first = await anthropic.messages.create({ model, max_tokens: 4096, thinking, tools, messages: ask });
    checkFirst(first, blocks, signature);
    const answer = await anthropic.messages.create({ model, max_tokens: 4096, thinking, tools, messages: next(first) });
    checkAnswer(answer, signed);
  });

  test(`anthropic messages with thinking: a tool loop's second turn carries the thinking back, streamed, ${by}`, { skip }, async () => {
    const first = await anthropic.messages.stream({ model, max_tokens: 4096, thinking, tools, messages: ask }).finalMessage();
    checkFirst(first, blocks, signature);
    const answer = await anthropic.messages.stream({ model, max_tokens: 4096, thinking, tools, messages: next(first) }).finalMessage();
    checkAnswer(answer, signed);
  });

  test(`anthropic messages with thinking: an altered signature reaches the upstream, which refuses it, ${by}`, { skip }, async () => {
    const first = await anthropic.messages.create({ model, max_tokens: 4096, thinking, tools, messages: ask });
    const altered = structuredClone(first);
    const block = altered.content.filter((b) => b.type === 'thinking').at(-1);
    const i = block.signature.length - 2; // before the base64 padding
    block.signature = block.signature.slice(0, i) + (block.signature[i] === 'A' ? 'B' : 'A') + block.signature.slice(i + 1);
    await assert.rejects(anthropic.messages.create({ model, max_tokens: 4096, thinking, tools, messages: next(altered) }), (err) => {
      assert.ok(err instanceof BadRequestError, `got ${err?.constructor?.name}: ${err}`);
      return true;
    });
  });

  test(`openai responses with reasoning: a tool loop's second turn carries the reasoning items back, ${by}`, { skip }, async () => {
    const rtools = [{ type: 'function', name: tools[0].name, description: tools[0].description, parameters: tools[0].input_schema, strict: false }];
    const req = { model, tools: rtools, reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'] };
    const first = await openai.responses.create({ ...req, input: ask });
    const reasoning = first.output.filter((o) => o.type === 'reasoning');
    assert.ok(reasoning.length > 0 && reasoning.every((o) => o.encrypted_content), `output ${JSON.stringify(first.output)}`);
    const call = first.output.find((o) => o.type === 'function_call');
    assert.deepEqual(JSON.parse(call.arguments), { city: 'example' });
    const answer = await openai.responses.create({ ...req, input: [...ask, ...first.output, { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 degrees.' }] });
    assert.equal(answer.status, 'completed');
    assert.match(answer.output_text, new RegExp(`^\\[${signed} thought signature\\(s\\) verified\\] The quick brown fox`), JSON.stringify(answer.output));
  });
}
