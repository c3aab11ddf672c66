import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { latch, runs, testTools } from '../helpers/test-tools.js';

let h: Harness;

beforeEach(async () => {
  for (const k of Object.keys(runs)) delete runs[k];
  h = await startHarness({ tools: testTools });
});
afterEach(async () => {
  await h.close();
});

const done = () => waitFor(() => h.events.some((e) => e.event.type === 'turn_done'), 'turn_done');

describe('turn engine', () => {
  it('streams a reply as deltas and a final reply', async () => {
    h.llm.push({ text: 'Hello there, this is a streamed answer.', chunkSize: 5 });
    const r = await h.send('hi');
    expect(r.status).toBe('queued');
    await done();
    const deltas = h.channel.eventsOf('delta').map((e) => e.text);
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe('Hello there, this is a streamed answer.');
    expect(h.channel.eventsOf('reply')[0]?.text).toBe('Hello there, this is a streamed answer.');
    expect(h.channel.eventsOf('turn_done')[0]?.status).toBe('done');
    const turn = await h.core.db.selectFrom('turns').selectAll().executeTakeFirstOrThrow();
    expect(turn).toMatchObject({
      status: 'done',
      rounds: 1,
      prompt_tokens: 12,
      completion_tokens: 6,
      requester_id: 'test:u1',
    });
    const req = h.llm.chatRequests()[0]?.body;
    expect(req.messages.at(-1)).toEqual({ role: 'user', content: 'hi' });
    expect(req.tools.map((t: any) => t.function.name)).toContain('echo');
  });

  it('times each message from receipt to the model request, its first byte, the first text shown and the final text shown', async () => {
    h.llm.push({ text: 'Timed answer, streamed.', chunkSize: 5 }, { text: 'second' });
    await h.send('one');
    await done();
    await h.core.idle();
    const stages = async () => {
      const metric = await h.core.metrics.messageLatency.get();
      return Object.fromEntries(
        metric.values.filter((v) => v.metricName?.endsWith('_count')).map((v) => [v.labels.stage, v.value]),
      );
    };
    expect(await stages()).toEqual({ model_request: 1, model_first_byte: 1, first_shown: 1, final_shown: 1 });
    await h.send('two');
    await waitFor(() => h.channel.eventsOf('turn_done').length === 2, 'second turn_done');
    await h.core.idle();
    expect(await stages()).toEqual({ model_request: 2, model_first_byte: 2, first_shown: 2, final_shown: 2 }); // once per message
    const text = await h.core.metrics.registry.metrics();
    expect(text).toContain('switchboard_message_latency_seconds_bucket{le="0.005",stage="final_shown"}');
  });

  it('runs two parallel tool calls whose arguments arrive split across chunks', async () => {
    h.llm.push(
      {
        toolCalls: [
          { name: 'echo', arguments: JSON.stringify({ text: 'one' }) },
          { name: 'echo', arguments: JSON.stringify({ text: 'two' }) },
        ],
        chunkSize: 3,
      },
      { text: 'both done' },
    );
    await h.send('go');
    await done();
    expect(runs.echo).toBe(2);
    const second = h.llm.chatRequests()[1]?.body;
    const toolMsgs = second.messages.filter((m: any) => m.role === 'tool');
    expect(toolMsgs.map((m: any) => m.content)).toEqual(['echo: one', 'echo: two']);
    const assistant = second.messages.find((m: any) => m.role === 'assistant');
    expect(assistant.tool_calls.map((c: any) => c.id)).toEqual(toolMsgs.map((m: any) => m.tool_call_id));
    expect(h.channel.eventsOf('reply').at(-1)?.text).toBe('both done');
  });

  it('runs the tool calls of one round at the same time', async () => {
    latch.reset();
    h.llm.push(
      {
        toolCalls: [
          { name: 'hold', arguments: '{}' },
          { name: 'hold', arguments: '{}' },
        ],
      },
      { text: 'both released' },
    );
    await h.send('go');
    // Both are running before either may finish: they run in parallel, not one after the other.
    await waitFor(() => runs.hold === 2, 'two hold calls running at once');
    latch.open();
    await done();
    expect(h.channel.eventsOf('tool_finished').map((e) => e.status)).toEqual(['done', 'done']);
  });

  it('maps a bare-string argument to the primary key and reports malformed or invalid arguments to the model', async () => {
    h.llm.push(
      {
        toolCalls: [
          { name: 'echo', arguments: 'bare words' },
          { name: 'echo', arguments: '{"text": "unterminated' },
          { name: 'danger', arguments: JSON.stringify({ target: 5 }) },
          { name: 'nope', arguments: '{}' },
        ],
      },
      { text: 'ok' },
    );
    await h.send('go');
    await done();
    expect(runs.echo).toBe(1);
    expect(runs.danger).toBeUndefined();
    const tools = h.llm
      .chatRequests()[1]
      ?.body.messages.filter((m: any) => m.role === 'tool')
      .map((m: any) => m.content);
    expect(tools[0]).toBe('echo: bare words');
    expect(tools[1]).toMatch(/not valid JSON/);
    expect(tools[2]).toMatch(/invalid arguments for danger: target/);
    expect(tools[3]).toMatch(/Unknown tool "nope"/);
    expect(h.channel.eventsOf('turn_done')[0]?.status).toBe('done');
    expect(h.channel.eventsOf('approval_requested')).toHaveLength(0);
  });

  it('retries a 429 with Retry-After and a 500, then answers', async () => {
    h.llm.push({ status: 429, retryAfter: '0' }, { status: 500 }, { text: 'after retries' });
    await h.send('hi');
    await done();
    expect(h.channel.eventsOf('reply')[0]?.text).toBe('after retries');
    expect(h.llm.chatRequests()).toHaveLength(3);
  });

  it('reports a refused key as a clear error and fails the turn', async () => {
    await h.close();
    h = await startHarness({ tools: testTools, overrides: { llm: { api_key: 'refused-key' } } });
    await h.send('hi');
    await done();
    expect(h.channel.eventsOf('error')[0]?.message).toMatch(/refused the API key \(HTTP 401\) — check OPENAI_API_KEY/);
    expect(h.channel.eventsOf('turn_done')[0]?.status).toBe('failed');
  });

  it('reports an unreachable endpoint as a clear error', async () => {
    await h.close();
    h = await startHarness({
      tools: testTools,
      overrides: { llm: { base_url: 'http://127.0.0.1:9/v1', max_retries: 0 } },
    });
    await h.send('hi');
    await done();
    expect(h.channel.eventsOf('error')[0]?.message).toMatch(
      /cannot reach the model endpoint .* — is the server running and the base URL right\?/,
    );
  });

  it('caps the rounds of a turn', async () => {
    await h.close();
    h = await startHarness({ tools: testTools, overrides: { llm: { max_rounds: 2 } } });
    h.llm.setHandler(() => ({ toolCalls: [{ name: 'echo', arguments: '{"text":"again"}' }] }));
    await h.send('loop');
    await done();
    expect(h.llm.chatRequests()).toHaveLength(2);
    expect(h.channel.eventsOf('error')[0]?.message).toMatch(/max_rounds/);
    expect(h.channel.eventsOf('turn_done')[0]?.status).toBe('failed');
  });

  it('gives a message that arrives mid-turn to the model at the next round boundary', async () => {
    latch.reset();
    h.llm.push({ toolCalls: [{ name: 'hold', arguments: '{}' }] }, { text: 'saw both' });
    await h.send('start');
    await waitFor(() => runs.hold === 1, 'hold tool running');
    expect((await h.send('and also this')).status).toBe('queued');
    const status = await h.core.status({ channel: 'test', chatKey: 'chat1' });
    expect(status).toMatchObject({ queued: 1, turn: 'running' });
    latch.open();
    await done();
    const second = h.llm.chatRequests()[1]?.body.messages;
    expect(second.map((m: any) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(second.at(-1).content).toBe('and also this');
    expect(h.channel.eventsOf('turn_done')).toHaveLength(1);
    expect(h.llm.chatRequests()).toHaveLength(2);
  });

  it('stop mid-stream cancels the turn, not fails it, and clears the queue', async () => {
    h.llm.push({ hang: true, text: 'partial' });
    await h.send('talk forever');
    await waitFor(() => h.channel.eventsOf('delta').length > 0, 'first delta');
    await h.send('queued behind');
    expect(await h.core.stop({ channel: 'test', chatKey: 'chat1' }, 'test:u1')).toBe(true);
    await done();
    expect(h.channel.eventsOf('turn_done').map((e) => e.status)).toEqual(['cancelled']);
    await h.core.idle();
    expect(h.llm.chatRequests()).toHaveLength(1);
    expect((await h.core.status({ channel: 'test', chatKey: 'chat1' })).queued).toBe(0);
    // The conversation still works afterwards.
    h.llm.push({ text: 'fresh' });
    await h.send('again');
    await waitFor(() => h.channel.eventsOf('reply').some((r) => r.text === 'fresh'), 'fresh reply');
  });

  it('stop mid-tool aborts the running tool and records it as cancelled', async () => {
    h.llm.push({ toolCalls: [{ name: 'sleep', arguments: '{}' }] });
    await h.send('sleep');
    await waitFor(() => runs.sleep === 1, 'sleep running');
    await h.core.stop({ channel: 'test', chatKey: 'chat1' }, 'test:u1');
    await done();
    await h.core.idle();
    const finished = h.channel.eventsOf('tool_finished');
    expect(finished.map((f) => f.status)).toEqual(['cancelled']);
    const row = await h.core.db.selectFrom('tool_calls').select(['status']).executeTakeFirstOrThrow();
    expect(row.status).toBe('cancelled');
    expect(h.channel.eventsOf('turn_done').map((e) => e.status)).toEqual(['cancelled']);
  });
});

describe('tool-call ids on the wire', () => {
  it('sends back the id the model gave, even when a server repeats it in every response', async () => {
    // Mistral-style ids (9 alphanumerics), then a server that says call_0 every time.
    h.llm.push(
      { toolCalls: [{ id: 'aB3dE5gH7', name: 'echo', arguments: '{"text":"one"}' }] },
      { toolCalls: [{ id: 'call_0', name: 'echo', arguments: '{"text":"two"}' }] },
      { toolCalls: [{ id: 'call_0', name: 'echo', arguments: '{"text":"three"}' }] },
      { text: 'all done' },
    );
    await h.send('go');
    await done();
    const last = h.llm.chatRequests()[3]?.body.messages;
    const sentCalls = last
      .filter((m: any) => m.role === 'assistant')
      .flatMap((m: any) => m.tool_calls ?? [])
      .map((c: any) => c.id);
    const sentResults = last.filter((m: any) => m.role === 'tool').map((m: any) => m.tool_call_id);
    expect(sentCalls).toEqual(['aB3dE5gH7', 'call_0', 'call_0']);
    expect(sentResults).toEqual(['aB3dE5gH7', 'call_0', 'call_0']);
    expect(last.filter((m: any) => m.role === 'tool').map((m: any) => m.content)).toEqual([
      'echo: one',
      'echo: two',
      'echo: three',
    ]);
    // The store keys the calls by its own unique ids.
    const rows = await h.core.db.selectFrom('tool_calls').select('id').execute();
    expect(new Set(rows.map((r) => r.id)).size).toBe(3);
  });
});

describe('empty model replies', () => {
  it('become an error event instead of an empty message, and the turn still ends done', async () => {
    const x = await startHarness({ tools: testTools });
    try {
      x.llm.push({ text: '' });
      await x.send('say nothing');
      await waitFor(() => x.channel.eventsOf('turn_done').length === 1, 'turn_done');
      expect(x.channel.eventsOf('reply')).toHaveLength(0);
      expect(x.channel.eventsOf('error')[0]?.message).toBe('the model returned an empty reply');
      expect(x.channel.eventsOf('turn_done')[0]?.status).toBe('done');
    } finally {
      await x.close();
    }
  });
});
