// The official SDKs against models served by each upstream format: Bedrock
// Converse and Gemini (simulated hosts), which no client speaks, so every
// request is translated into the upstream's format and every answer back;
// and OpenAI Chat and Anthropic Messages (simulated providers), translated
// for the other APIs' clients and passed through for their own. Each case
// runs against each format, and the SDK's own parsing is the judge.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import Anthropic, { APIError as AnthropicAPIError, BadRequestError as AnthropicBadRequestError } from '@anthropic-ai/sdk';
import OpenAI, { APIError, BadRequestError } from 'openai';

import { key, models, routingHeaders, timeout, url } from './gateway.js';

const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0, timeout });
const anthropic = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0, timeout });

// Every stop word each upstream sends, and what each client API must read:
// Chat finish_reason, Messages stop_reason, and the Responses
// incomplete_details.reason (null: the response is completed).
const filtered = ['content_filter', 'refusal', 'content_filter'];
const stopped = ['stop', 'end_turn', null];
const cut = ['length', 'max_tokens', 'max_output_tokens'];
const upstreams = [
  {
    format: 'Bedrock Converse',
    model: models.converse,
    // What a Messages client reads when a stop sequence matched: Converse
    // says stop_sequence (without the string), Gemini only STOP.
    stopSequence: 'stop_sequence',
    broken: models.brokenConverse,
    reasoningCounted: false, // Converse's usage has no reasoning count
    finishes: {
      end_turn: stopped,
      stop_sequence: ['stop', 'stop_sequence', null],
      max_tokens: cut,
      model_context_window_exceeded: ['length', 'model_context_window_exceeded', 'max_output_tokens'],
      guardrail_intervened: filtered,
      content_filtered: filtered,
      malformed_tool_use: stopped,
      malformed_model_output: stopped,
    },
  },
  {
    format: 'Gemini',
    model: models.gemini,
    stopSequence: 'end_turn',
    broken: models.brokenGemini,
    reasoningCounted: true, // thoughtsTokenCount
    finishes: {
      STOP: stopped,
      MAX_TOKENS: cut,
      SAFETY: filtered,
      RECITATION: filtered,
      BLOCKLIST: filtered,
      PROHIBITED_CONTENT: filtered,
      SPII: filtered,
      IMAGE_SAFETY: filtered,
      MALFORMED_FUNCTION_CALL: stopped,
      UNEXPECTED_TOOL_CALL: stopped,
      TOO_MANY_TOOL_CALLS: stopped,
      LANGUAGE: stopped,
      OTHER: stopped,
    },
  },
  // The two formats clients speak, as upstreams of the other APIs. The
  // simulated OpenAI provider serves the Responses API itself (not
  // translated, and without tools or stop words), and neither has a prompt
  // cache here: those cases run against Converse and Gemini only.
  {
    format: 'OpenAI Chat',
    model: models.chat,
    broken: models.brokenChat,
    stopSequence: 'end_turn', // OpenAI does not say a stop sequence matched
    reasoningCounted: false, // the simulated model does not reason
    responsesTranslated: false,
    cached: false,
    serialCalls: true, // parallel_tool_calls / disable_parallel_tool_use
    finishes: { stop: stopped, length: cut, content_filter: filtered },
  },
  {
    format: 'Anthropic Messages',
    model: models.messages,
    broken: models.brokenMessages,
    stopSequence: 'stop_sequence',
    reasoningCounted: false, // Anthropic's usage has no reasoning count
    cached: false,
    serialCalls: true,
    finishes: {
      end_turn: stopped,
      stop_sequence: ['stop', 'stop_sequence', null],
      max_tokens: cut,
      model_context_window_exceeded: ['length', 'model_context_window_exceeded', 'max_output_tokens'],
      // The text before the refusal stays text, unary and streamed alike
      // (a stream sent it before it knew): a content filter stop to a
      // Responses client, see docs/translation.md.
      refusal: ['content_filter', 'refusal', 'content_filter'],
      pause_turn: ['stop', 'pause_turn', null],
    },
  },
].filter((u) => u.model);

// The last response.* event that ends a Responses stream.
async function lastResponse(stream) {
  let last;
  for await (const ev of stream) {
    if (['response.completed', 'response.incomplete', 'response.failed'].includes(ev.type)) last = ev.response;
  }
  return last;
}

// Two tools: one with a required argument, one with none, and the marker
// that makes the simulated model call both at once.
const weather = { name: 'get_weather', description: 'The weather in a city', schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const now = { name: 'now', description: 'The time', schema: { type: 'object', properties: {} } };
const parallel = 'sim:parallel What is the weather in Paris, and the time?';
const chatTools = [weather, now].map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.schema } }));
const messagesTools = [weather, now].map((t) => ({ name: t.name, description: t.description, input_schema: t.schema }));
const responsesTools = [weather, now].map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.schema, strict: false }));
// A 1x1 PNG.
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };

// checkCalls: the two calls, the second with no arguments ({}).
function checkCalls(calls, args = (c) => c.args) {
  assert.deepEqual(calls.map((c) => c.name), [weather.name, now.name], `calls = ${JSON.stringify(calls)}`);
  assert.deepEqual(args(calls[0]), { city: 'example' });
  assert.deepEqual(args(calls[1]), {});
  assert.ok(calls[0].id && calls[1].id && calls[0].id !== calls[1].id, `call ids ${calls.map((c) => c.id)}`);
}

for (const { format, model, broken, finishes, reasoningCounted, stopSequence, responsesTranslated = true, cached = true, serialCalls = false } of upstreams) {
  const by = `served by ${format}`;

  test(`openai chat.completions text, unary, ${by}`, async () => {
    const { data, response } = await openai.chat.completions
      .create({ model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello.' }], stop: ['END'], temperature: 0.5 })
      .withResponse();
    routingHeaders(assert, response.headers);
    assert.equal(data.object, 'chat.completion');
    assert.equal(data.choices[0].finish_reason, 'stop');
    assert.ok(data.choices[0].message.content, 'no text');
    assert.ok(data.usage.prompt_tokens > 0 && data.usage.completion_tokens > 0, `usage = ${JSON.stringify(data.usage)}`);
    assert.equal(data.usage.total_tokens, data.usage.prompt_tokens + data.usage.completion_tokens);
  });

  test(`openai chat.completions text, streaming with usage, ${by}`, async () => {
    const stream = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello.' }], stream: true, stream_options: { include_usage: true } });
    let content = '';
    let chunks = 0;
    let usage;
    let finish;
    for await (const chunk of stream) {
      chunks++;
      content += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    assert.ok(chunks > 2 && content.length > 0, `${chunks} chunks, content ${JSON.stringify(content)}`);
    assert.equal(finish, 'stop');
    assert.ok(usage?.prompt_tokens > 0 && usage?.completion_tokens > 0, `usage = ${JSON.stringify(usage)}`);
  });

  test(`openai chat.completions multi-turn with an image, ${by}`, async () => {
    const data = await openai.chat.completions.create({
      model,
      messages: [
        { role: 'user', content: 'Hello.' },
        { role: 'assistant', content: 'Hi. What can I do?' },
        { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] },
      ],
    });
    assert.match(data.choices[0].message.content, /1 image/);
  });

  test(`openai chat.completions parallel tool calls (one without arguments), unary and streaming, then the results, ${by}`, async () => {
    const messages = [{ role: 'user', content: parallel }];
    const data = await openai.chat.completions.create({ model, messages, tools: chatTools });
    assert.equal(data.choices[0].finish_reason, 'tool_calls');
    const calls = data.choices[0].message.tool_calls;
    checkCalls(calls.map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) })));

    const final = await openai.chat.completions.stream({ model, messages, tools: chatTools, stream_options: { include_usage: true } }).finalChatCompletion();
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
    checkCalls(final.choices[0].message.tool_calls.map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) })));

    const next = await openai.chat.completions.create({
      model,
      tools: chatTools,
      messages: [
        ...messages,
        data.choices[0].message,
        { role: 'tool', tool_call_id: calls[0].id, content: '{"temperature":21}' },
        { role: 'tool', tool_call_id: calls[1].id, content: 'error: the clock is down' },
      ],
    });
    assert.equal(next.choices[0].finish_reason, 'stop');
    assert.ok(next.choices[0].message.content, 'no text after the tool results');
  });

  test(`one tool call at a time (parallel_tool_calls false, disable_parallel_tool_use): ${serialCalls ? 'held' : 'refused with a 400 naming the field'}, ${by}`, async () => {
    const messages = [{ role: 'user', content: parallel }];
    const c = () => openai.chat.completions.create({ model, messages, tools: chatTools, parallel_tool_calls: false });
    const m = () => anthropic.messages.create({ model, max_tokens: 256, messages, tools: messagesTools, tool_choice: { type: 'auto', disable_parallel_tool_use: true } });
    const r = () => openai.responses.create({ model, input: messages, tools: responsesTools, parallel_tool_calls: false });
    if (serialCalls) {
      assert.equal((await c()).choices[0].message.tool_calls.length, 1);
      assert.equal((await m()).content.filter((b) => b.type === 'tool_use').length, 1);
      if (responsesTranslated) assert.equal((await r()).output.filter((o) => o.type === 'function_call').length, 1);
      return;
    }
    // Converse and Gemini have no field that holds a model to one call.
    for (const ask of [c, r]) {
      await assert.rejects(ask, (err) => {
        assert.ok(err instanceof BadRequestError, `got ${err?.constructor?.name}: ${err}`);
        assert.equal(err.param, 'parallel_tool_calls');
        return true;
      });
    }
    await assert.rejects(m, (err) => {
      assert.ok(err instanceof AnthropicBadRequestError, `got ${err?.constructor?.name}: ${err}`);
      assert.match(err.message, /tool_choice\.disable_parallel_tool_use/);
      return true;
    });
  });

  test(`openai chat.completions structured output (json_schema) is accepted, ${by}`, async () => {
    const data = await openai.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Answer in JSON.' }],
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
    });
    assert.equal(data.choices[0].finish_reason, 'stop');
  });

  test(`anthropic messages text, unary and streaming, ${by}`, async () => {
    const { data, response } = await anthropic.messages
      .create({ model, max_tokens: 64, system: 'Be brief.', stop_sequences: ['END'], messages: [{ role: 'user', content: 'Say hello.' }] })
      .withResponse();
    routingHeaders(assert, response.headers);
    assert.equal(data.type, 'message');
    assert.equal(data.stop_reason, 'end_turn');
    assert.ok(data.content.some((b) => b.type === 'text' && b.text));
    assert.ok(data.usage.input_tokens > 0 && data.usage.output_tokens > 0, `usage = ${JSON.stringify(data.usage)}`);

    const final = await anthropic.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] }).finalMessage();
    assert.equal(final.stop_reason, 'end_turn');
    assert.ok(final.content.some((b) => b.type === 'text' && b.text));
    assert.ok(final.usage.input_tokens > 0 && final.usage.output_tokens > 0, `usage = ${JSON.stringify(final.usage)}`);
  });

  test(`stop sequences end the text before them, each SDK, ${by}`, async () => {
    // The simulated model says "The quick brown fox jumps ...".
    const c = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello.' }], stop: ['fox'] });
    assert.equal(c.choices[0].message.content, 'The quick brown');
    assert.equal(c.choices[0].finish_reason, 'stop');
    const ms = await anthropic.messages.stream({ model, max_tokens: 64, stop_sequences: ['fox'], messages: [{ role: 'user', content: 'Say hello.' }] }).finalMessage();
    assert.equal(ms.content.map((b) => b.text).join(''), 'The quick brown');
    assert.equal(ms.stop_reason, stopSequence);
    // The Responses API has no stop sequences: its request cannot ask.
  });

  test(`anthropic messages with an image, ${by}`, async () => {
    const data = await anthropic.messages.create({
      model,
      max_tokens: 64,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] }],
    });
    assert.match(data.content.filter((b) => b.type === 'text').map((b) => b.text).join(''), /1 image/);
  });

  test(`anthropic messages parallel tool use (one without input), streaming, then an error result, ${by}`, async () => {
    const messages = [{ role: 'user', content: parallel }];
    const final = await anthropic.messages.stream({ model, max_tokens: 256, messages, tools: messagesTools }).finalMessage();
    assert.equal(final.stop_reason, 'tool_use');
    const uses = final.content.filter((b) => b.type === 'tool_use');
    checkCalls(uses.map((u) => ({ id: u.id, name: u.name, args: u.input })));
    // Ids an Anthropic target would take, so the next turn can go anywhere.
    for (const u of uses) assert.match(u.id, /^[A-Za-z0-9_-]+$/, 'an Anthropic client gets ids Anthropic accepts');

    const next = await anthropic.messages.create({
      model,
      max_tokens: 256,
      tools: messagesTools,
      messages: [
        ...messages,
        { role: 'assistant', content: final.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: uses[0].id, content: '{"temperature":21}' },
            { type: 'tool_result', tool_use_id: uses[1].id, content: 'the clock is down', is_error: true },
          ],
        },
      ],
    });
    assert.equal(next.stop_reason, 'end_turn');
    assert.ok(next.content.some((b) => b.type === 'text' && b.text), 'no text after the tool results');
  });

  const responsesSkip = !responsesTranslated && 'the simulated OpenAI provider serves the Responses API itself';
  test(`openai responses text, unary and streaming, ${by}`, async () => {
    const data = await openai.responses.create({ model, instructions: 'Be brief.', input: 'Say hello.' });
    assert.equal(data.status, 'completed');
    assert.ok(data.output_text, 'no output_text');
    assert.ok(data.usage.input_tokens > 0 && data.usage.output_tokens > 0, `usage = ${JSON.stringify(data.usage)}`);
    assert.equal(data.usage.total_tokens, data.usage.input_tokens + data.usage.output_tokens);
    const msg = data.output.find((o) => o.type === 'message');
    assert.equal(msg?.status, 'completed');

    const stream = await openai.responses.create({ model, input: 'Say hello.', stream: true });
    let final;
    let text = '';
    for await (const ev of stream) {
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') final = ev.response;
    }
    assert.equal(final?.status, 'completed');
    assert.equal(final.output_text ?? text, text);
    assert.ok(text.length > 0);
  });

  test(`openai responses function calls (one without arguments), then their outputs, ${by}`, { skip: responsesSkip }, async () => {
    const input = [{ role: 'user', content: parallel }];
    const data = await openai.responses.create({ model, input, tools: responsesTools });
    const calls = data.output.filter((o) => o.type === 'function_call');
    checkCalls(calls.map((c) => ({ id: c.call_id, name: c.name, args: JSON.parse(c.arguments) })));
    const next = await openai.responses.create({
      model,
      tools: responsesTools,
      input: [...input, ...calls, ...calls.map((c, i) => ({ type: 'function_call_output', call_id: c.call_id, output: i ? 'error: the clock is down' : '{"temperature":21}' }))],
    });
    assert.equal(next.status, 'completed');
    assert.ok(next.output_text, 'no text after the outputs');
  });

  test(`openai responses structured output (text.format json_schema) is accepted, ${by}`, { skip: responsesSkip }, async () => {
    const data = await openai.responses.create({ model, input: 'Answer in JSON.', text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } } });
    assert.equal(data.status, 'completed');
  });

  test(`a stream broken mid-answer ends in an error the SDKs raise, ${by}`, { skip: !broken && 'no broken model' }, async () => {
    let content = '';
    await assert.rejects(
      async () => {
        const stream = await openai.chat.completions.create({ model: broken, messages: [{ role: 'user', content: 'Say hello.' }], stream: true });
        for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
      },
      (err) => {
        assert.ok(err instanceof APIError, `got ${err?.constructor?.name}: ${err}`);
        return true;
      },
    );
    assert.ok(content.length > 0, 'no content before the break');
    await assert.rejects(
      async () => {
        const stream = anthropic.messages.stream({ model: broken, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] });
        await stream.finalMessage();
      },
      (err) => {
        assert.ok(err instanceof AnthropicAPIError, `got ${err?.constructor?.name}: ${err}`);
        return true;
      },
    );
    const types = [];
    await assert.rejects(
      async () => {
        const stream = await openai.responses.create({ model: broken, input: 'Say hello.', stream: true });
        for await (const ev of stream) types.push(ev.type);
      },
      (err) => {
        assert.ok(err instanceof APIError, `got ${err?.constructor?.name}: ${err}`);
        return true;
      },
    );
    assert.ok(!types.includes('response.completed'), `events = ${types}`);
  });

  for (const [word, [chat, messages, responses]] of Object.entries(finishes)) {
    test(`finish ${word} from ${format}: each SDK, unary and streaming, reads its own word`, async () => {
      const ask = `sim:stop=${word} Say hello.`;
      const c = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: ask }] });
      assert.equal(c.choices[0].finish_reason, chat, 'chat unary');
      const cs = await openai.chat.completions.stream({ model, messages: [{ role: 'user', content: ask }] }).finalChatCompletion();
      assert.equal(cs.choices[0].finish_reason, chat, 'chat stream');

      const m = await anthropic.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: ask }] });
      assert.equal(m.stop_reason, messages, 'messages unary');
      const ms = await anthropic.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: ask }] }).finalMessage();
      assert.equal(ms.stop_reason, messages, 'messages stream');

      if (!responsesTranslated || responses === undefined) return;
      const r = await openai.responses.create({ model, input: ask });
      const rs = await lastResponse(await openai.responses.create({ model, input: ask, stream: true }));
      for (const [how, resp] of [['unary', r], ['stream', rs]]) {
        const status = responses ? 'incomplete' : 'completed';
        assert.equal(resp?.status, status, `responses ${how}: ${JSON.stringify(resp?.incomplete_details)}`);
        assert.equal(resp.incomplete_details?.reason ?? null, responses, `responses ${how}`);
        // The item an answer was cut in, or a filter stopped, is
        // incomplete too, as OpenAI says it.
        const itemStatus = responses ? 'incomplete' : 'completed';
        const item = resp.output.find((o) => o.type === 'message');
        assert.equal(item?.status, itemStatus, `responses ${how}: the message item says ${item?.status}, the response ${resp.status}`);
      }
    });
  }

  test(`usage with cached tokens: the second request of a long prompt, each SDK, ${by}`, { skip: !cached && 'no prompt cache on this upstream' }, async () => {
    const system = `${format} cache test. ` + 'You are a careful assistant who answers briefly. '.repeat(200);
    const turns = [
      { role: 'user', content: 'Hello.' },
      { role: 'assistant', content: 'Hi.' },
      { role: 'user', content: 'Say hello again.' },
    ];
    const chatAsk = () => openai.chat.completions.create({ model, messages: [{ role: 'system', content: `chat ${system}` }, ...turns] });
    const first = await chatAsk();
    assert.ok(!(first.usage.prompt_tokens_details?.cached_tokens > 0), `first chat usage = ${JSON.stringify(first.usage)}`);
    const again = await chatAsk();
    const cached = again.usage.prompt_tokens_details?.cached_tokens;
    assert.ok(cached > 0 && again.usage.prompt_tokens > cached, `second chat usage = ${JSON.stringify(again.usage)}`);
    assert.equal(again.usage.prompt_tokens, first.usage.prompt_tokens, 'prompt_tokens counts the cached tokens too');

    const messagesAsk = () => anthropic.messages.create({ model, max_tokens: 64, system: `messages ${system}`, messages: turns });
    const m1 = await messagesAsk();
    const m2 = await messagesAsk();
    assert.ok(m2.usage.cache_read_input_tokens > 0, `second messages usage = ${JSON.stringify(m2.usage)}`);
    assert.equal(m2.usage.input_tokens + m2.usage.cache_read_input_tokens, m1.usage.input_tokens + (m1.usage.cache_read_input_tokens ?? 0),
      'input_tokens leaves out the tokens read from the cache');

    const responsesAsk = () => openai.responses.create({ model, instructions: `responses ${system}`, input: turns });
    await responsesAsk();
    const r2 = await responsesAsk();
    assert.ok(r2.usage.input_tokens_details?.cached_tokens > 0, `second responses usage = ${JSON.stringify(r2.usage)}`);
  });

  test(`usage with reasoning tokens ${reasoningCounted ? 'counted' : 'left out, not claimed 0'}, ${by}`, async () => {
    const ask = [{ role: 'user', content: 'Think, then say hello.' }];
    const c = await openai.chat.completions.create({ model, messages: ask, reasoning_effort: 'low' });
    const cr = c.usage.completion_tokens_details?.reasoning_tokens;
    const r = responsesTranslated ? await openai.responses.create({ model, input: 'Think, then say hello.', reasoning: { effort: 'low' } }) : null;
    const rr = r?.usage.output_tokens_details?.reasoning_tokens;
    if (reasoningCounted) {
      assert.ok(cr > 0 && c.usage.completion_tokens > cr, `chat usage = ${JSON.stringify(c.usage)}`);
      assert.ok(rr > 0 && r.usage.output_tokens > rr, `responses usage = ${JSON.stringify(r.usage)}`);
    } else {
      assert.equal(cr, undefined, `chat usage = ${JSON.stringify(c.usage)}`);
      assert.equal(rr, undefined, `responses usage = ${JSON.stringify(r?.usage)}`);
    }
    // Anthropic's usage has no reasoning count: output_tokens includes it.
    const plain = await anthropic.messages.create({ model, max_tokens: 4096, messages: ask });
    const thought = await anthropic.messages.create({ model, max_tokens: 4096, messages: ask, thinking: { type: 'enabled', budget_tokens: 2048 } });
    if (reasoningCounted) {
      assert.ok(thought.usage.output_tokens > plain.usage.output_tokens, `with thinking ${JSON.stringify(thought.usage)}, without ${JSON.stringify(plain.usage)}`);
    }
  });
}
