/**
 * A server's own requests answered in the conversation, against server-everything over stdio and
 * Streamable HTTP: form elicitation as question cards (buttons, free text valid and invalid,
 * Decline, Cancel, timeout, expiry after a restart, only the requester may answer), URL
 * elicitation with Done, and sampling asked, approved, denied, turned off and allowed.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { CallScope } from '../../src/mcp/connection.js';
import { SwitchboardHost } from '../../src/mcp/host.js';
import type { ToolContext } from '../../src/tools/types.js';
import { type Harness, startHarness, waitFor } from '../helpers/harness.js';
import { sharedSetup } from './shared-setup.js';
import { type EverythingHttp, everythingStdio, startEverythingHttp } from './reference-servers.js';

const ALLOW = { rules: [{ tool: 'mcp__*', action: 'allow' }] };

let h: Harness | undefined;
let http: EverythingHttp | undefined;
/** False while `h` is the describe's shared harness, which its afterAll closes. */
let ownHarness = true;
// A test on the shared harness has a chat of its own; these are where its requests, events and
// question cards begin, so that what earlier tests left there is not read as this test's.
let chatKey = 'chat1';
let firstRequest = 0;
let firstEvent = 0;
let firstQuestion = 0;
afterEach(async () => {
  if (ownHarness) {
    await h?.close();
    await http?.kill();
  }
  h = http = undefined;
  ownHarness = true;
  chatKey = 'chat1';
  firstRequest = firstEvent = firstQuestion = 0;
});

/** This test's requests to the model, in order. */
const requests = () => (h as Harness).llm.chatRequests().slice(firstRequest);
const toolMessages = (round: number): string[] =>
  requests()
    [round]?.body.messages.filter((m: any) => m.role === 'tool')
    .map((m: any) => m.content) ?? [];
const turnsDone = (n: number) =>
  waitFor(
    () => (h?.events.slice(firstEvent).filter((e) => e.event.type === 'turn_done').length ?? 0) >= n,
    `${n} turn(s) done`,
    30_000,
  );
const questions = () => h?.channel.eventsOf('question').slice(firstQuestion) ?? [];
/** Send `text` in this test's chat. */
const send = (text: string) => (h as Harness).send(text, { chatKey });
/** The n-th question card (0-based) once it was asked. */
const nthQuestion = (n: number) => waitFor(() => questions()[n], `question ${n + 1}`, 15_000);
const answer = (id: string, text: string, by = 'test:u1') => (h as Harness).core.answerQuestion({ id, text, by });
const card = async (id: string) => {
  const row = await h?.core.db
    .selectFrom('deliveries')
    .select('content')
    .where('idem_key', '=', `card:${id}`)
    .executeTakeFirst();
  return JSON.parse(row?.content ?? '{}') as { question: string; answers: string[]; state: string };
};

describe.each(['stdio', 'http'] as const)('server-everything over %s asks the user', (mode) => {
  /**
   * A harness with server-everything as `ev` (with `server`'s settings) and as each of `others`
   * (name: settings); over HTTP they are sessions of one server process.
   */
  async function open(
    mcp: Record<string, unknown> = {},
    server: Record<string, unknown> = {},
    others: Record<string, Record<string, unknown>> = {},
  ) {
    const server_ = mode === 'http' ? await startEverythingHttp() : undefined;
    const entry = (extra: Record<string, unknown>) =>
      server_ ? { url: server_.url, ...extra } : everythingStdio(extra);
    const servers = Object.fromEntries(
      Object.entries({ ev: server, ...others }).map(([name, extra]) => [name, entry(extra)]),
    );
    const harness = await startHarness({ overrides: { mcp: { servers, ...mcp }, approvals: ALLOW } });
    for (const name of Object.keys(servers))
      await waitFor(
        () => harness.core.registry.get(`mcp__${name}__trigger-elicitation-request`),
        'conditional tools',
        15_000,
      );
    return { harness, server: server_ };
  }

  /** A harness and server of the test's own: for a configuration other than the default. */
  async function start(mcp: Record<string, unknown> = {}, server: Record<string, unknown> = {}) {
    ({ harness: h, server: http } = await open(mcp, server));
  }

  // The settings the sampling tests need, on servers and a cap no other test uses: a harness
  // and server started for each of them cost seconds.
  const shared = sharedSetup(() =>
    open(
      { sampling_max_tokens: 50 },
      {},
      {
        'ev-off': { sampling: 'deny' },
        'ev-small': { sampling: 'allow', sampling_model: 'small-model' },
      },
    ),
  );
  /** The shared harness, with a new chat for this test. */
  async function startShared() {
    h = (await shared.take()).harness;
    ownHarness = false;
    chatKey = `chat-${h.llm.chatRequests().length}-${h.events.length}`;
    firstRequest = h.llm.chatRequests().length;
    firstEvent = h.events.length;
    firstQuestion = h.channel.eventsOf('question').length;
  }

  it('asks a form field by field: buttons, free text checked against the schema, Skip; the server gets the values', async () => {
    await startShared();
    h?.llm.push({ toolCalls: [{ name: 'mcp__ev__trigger-elicitation-request', arguments: '{}' }] }, { text: 'done' });
    await send('form');
    // Each reply in field order; a wrong one is refused with the reason and the field asked again.
    const replies: Array<[string, string, RegExp?]> = [
      ['name', 'Ada Lovelace'],
      ['check', 'Yes'],
      ['firstLine', 'Skip'],
      ['email', 'not-an-email', /Not accepted: "not-an-email" is not an email address/],
      ['email', 'ada@example.org'],
      ['homepage', 'Skip'],
      ['birthdate', '1815-12-10'],
      ['integer', '500', /Not accepted: 500 is more than 100/],
      ['integer', '7'],
      ['number', 'Skip'],
      ['untitledSingleSelectEnum', 'Joey'],
      ['untitledMultipleSelectEnum', 'Guitar, Drums'],
      ['titledSingleSelectEnum', 'Wonder Woman'],
      ['titledMultipleSelectEnum', 'Skip'],
      ['legacyTitledEnum', 'Dogs'],
    ];
    for (const [i, [, reply, refusal]] of replies.entries()) {
      const q = await nthQuestion(i);
      expect(q.question).toMatch(/^🔌 MCP server "ev" asks: Please provide inputs/);
      expect(q.suggestedAnswers.slice(-2)).toEqual(['Decline', 'Cancel']);
      if (i === 0) {
        expect(q.question).toContain('String (required): Your full, legal name');
        // Only the requester (or an admin) answers.
        expect(await answer(q.id, 'Mallory', 'test:u2')).toMatchObject({ ok: false, reason: 'not_allowed' });
      }
      if (i === 1) expect(q.suggestedAnswers).toEqual(['Yes', 'No', 'Skip', 'Decline', 'Cancel']);
      if (i === 10)
        expect(q.suggestedAnswers.slice(0, 6)).toEqual(['Monica', 'Rachel', 'Joey', 'Chandler', 'Ross', 'Phoebe']);
      if (i === 12) expect(q.suggestedAnswers.slice(0, 3)).toEqual(['Superman', 'Green Lantern', 'Wonder Woman']);
      expect(await answer(q.id, reply)).toMatchObject({ ok: true });
      if (refusal) expect((await nthQuestion(i + 1)).question).toMatch(refusal);
    }
    await turnsDone(1);
    const result = toolMessages(1)[0] ?? '';
    expect(result).toContain('✅ User provided the requested information!');
    const raw = JSON.parse(result.slice(result.indexOf('Raw result: ') + 12));
    expect(raw).toEqual({
      action: 'accept',
      content: {
        name: 'Ada Lovelace',
        check: true,
        email: 'ada@example.org',
        birthdate: '1815-12-10',
        integer: 7,
        untitledSingleSelectEnum: 'Joey',
        untitledMultipleSelectEnum: ['Guitar', 'Drums'],
        titledSingleSelectEnum: 'hero-3',
        legacyTitledEnum: 'pet-2',
      },
    });
    expect((await card(questions()[0]?.id as string)).state).toBe('answered');
  });

  it('maps Decline and Cancel to the spec actions', async () => {
    await startShared();
    h?.llm.push(
      { toolCalls: [{ name: 'mcp__ev__trigger-elicitation-request', arguments: '{}' }] },
      { toolCalls: [{ name: 'mcp__ev__trigger-elicitation-request', arguments: '{}' }] },
      { text: 'done' },
    );
    await send('twice');
    await answer((await nthQuestion(0)).id, 'Decline');
    await answer((await nthQuestion(1)).id, 'Cancel');
    await turnsDone(1);
    expect(toolMessages(1)[0]).toContain('❌ User declined to provide the requested information.');
    expect(toolMessages(2)[1]).toContain('⚠️ User cancelled the elicitation dialog.');
  });

  it('cancels the form when no answer comes in time, and says so on the card', async () => {
    await start({ ask_timeout_seconds: 1 });
    h?.llm.push({ toolCalls: [{ name: 'mcp__ev__trigger-elicitation-request', arguments: '{}' }] }, { text: 'done' });
    await send('form');
    const q = await nthQuestion(0);
    await turnsDone(1);
    expect(toolMessages(1)[0]).toContain('⚠️ User cancelled the elicitation dialog.');
    const c = await card(q.id);
    expect(c.state).toBe('cancelled');
    expect(c.question).toContain('⌛ No answer within 1 s: cancelled.');
    expect(await answer(q.id, 'late')).toMatchObject({ ok: false, reason: 'already_decided' });
  });

  it('closes a waiting card on stop, and the call ends cancelled', async () => {
    await startShared();
    h?.llm.push({ toolCalls: [{ name: 'mcp__ev__trigger-elicitation-request', arguments: '{}' }] });
    const sent = await send('form');
    const conversation = (sent as { conversationId: string }).conversationId;
    const q = await nthQuestion(0);
    await h?.core.stop({ channel: 'test', chatKey }, 'test:u1');
    await waitFor(async () => (await card(q.id)).state === 'cancelled', 'card cancelled');
    const call = await waitFor(
      async () =>
        (await h?.core.db
          .selectFrom('tool_calls')
          .select('status')
          .where('conversation_id', '=', conversation)
          .where('status', '=', 'cancelled')
          .executeTakeFirst()) ?? null,
      'call cancelled',
    );
    expect(call.status).toBe('cancelled');
    expect(await answer(q.id, 'Ada')).toMatchObject({ ok: false, reason: 'already_decided' });
  });

  it('shows a URL elicitation as a link with consent wording and Done', async () => {
    await startShared();
    h?.llm.push(
      {
        toolCalls: [
          {
            name: 'mcp__ev__trigger-url-elicitation',
            arguments: '{"url":"https://example.org/authorize?x=1","message":"Sign in to continue."}',
          },
        ],
      },
      { text: 'done' },
    );
    await send('link');
    const q = await nthQuestion(0);
    expect(q.question).toContain(
      '🔌 MCP server "ev" asks: Sign in to continue.\n\nhttps://example.org/authorize?x=1\n',
    );
    expect(q.question).toContain(
      'opens the site example.org outside switchboard. Open it only if you trust the server "ev" and that site',
    );
    expect(q.suggestedAnswers).toEqual(['Done', 'Decline', 'Cancel']);
    await answer(q.id, 'Done');
    await turnsDone(1);
    expect(toolMessages(1)[0]).toContain('✅ User completed the URL elicitation flow.');
  });

  it("asks a task's clarification (input_required) on a card and the task goes on with the answer", async () => {
    await startShared();
    h?.llm.push(
      { toolCalls: [{ name: 'mcp__ev__simulate-research-query', arguments: '{"topic":"python","ambiguous":true}' }] },
      { text: 'done' },
    );
    await send('research');
    const q = await nthQuestion(0);
    expect(q.question).toMatch(
      /^🔌 MCP server "ev" asks: The research query "python" could have multiple interpretations/,
    );
    const choice = q.suggestedAnswers[0] as string;
    expect(q.suggestedAnswers.length).toBeGreaterThan(3);
    await answer(q.id, choice);
    await turnsDone(1);
    expect(toolMessages(1)[0]).toMatch(/# Research Report: python \(/);
    expect(toolMessages(1)[0]).toContain('input_required');
  });

  it('asks before sampling, then answers through the model with the token cap, its name and stop reason', async () => {
    await startShared();
    h?.llm.push({
      toolCalls: [
        { name: 'mcp__ev__trigger-sampling-request', arguments: '{"prompt":"name a colour","maxTokens":4000}' },
      ],
    });
    await send('sample');
    const q = await nthQuestion(0);
    expect(q.question).toMatch(/^🔌 MCP server "ev" wants to ask the model \(at most 50 tokens\):/);
    expect(q.question).toContain('User: Resource trigger-sampling-request context: name a colour');
    expect(q.suggestedAnswers).toEqual(['Allow', 'Deny']);
    // Nothing went to the model before the answer.
    expect(requests()).toHaveLength(1);
    h?.llm.push({ text: 'teal' }, { text: 'done' });
    await answer(q.id, 'Allow');
    await turnsDone(1);
    const sampling = requests()[1]?.body;
    expect(sampling.max_tokens).toBe(50);
    expect(sampling.messages).toEqual([
      { role: 'system', content: 'You are a helpful test server.' },
      { role: 'user', content: 'Resource trigger-sampling-request context: name a colour' },
    ]);
    const result = toolMessages(2)[0] ?? '';
    const sent = JSON.parse(result.slice(result.indexOf('{')));
    expect(sent).toMatchObject({
      role: 'assistant',
      content: { type: 'text', text: 'teal' },
      model: 'test-model',
      stopReason: 'endTurn',
    });
  });

  it('sends nothing to the model when the user denies sampling', async () => {
    await startShared();
    h?.llm.push(
      { toolCalls: [{ name: 'mcp__ev__trigger-sampling-request', arguments: '{"prompt":"secret"}' }] },
      { text: 'done' },
    );
    await send('sample');
    await answer((await nthQuestion(0)).id, 'Deny');
    await turnsDone(1);
    expect(requests()).toHaveLength(2);
    expect(toolMessages(1)[0]).toBe('Error from MCP server "ev": MCP error -1: Sampling declined: the user denied it.');
  });

  it('refuses sampling without a card under sampling = "deny", and answers at once with the sampling model under "allow"', async () => {
    await startShared();
    h?.llm.push(
      { toolCalls: [{ name: 'mcp__ev-off__trigger-sampling-request', arguments: '{"prompt":"x"}' }] },
      { text: 'done' },
    );
    await send('sample');
    await turnsDone(1);
    expect(questions()).toHaveLength(0);
    expect(toolMessages(1)[0]).toContain('Sampling is turned off for the MCP server "ev-off".');
    // The second part in a chat of its own, so its requests and tool results are its alone.
    chatKey = `${chatKey}-allow`;
    firstRequest = (h as Harness).llm.chatRequests().length;
    firstEvent = (h as Harness).events.length;
    h?.llm.push(
      { toolCalls: [{ name: 'mcp__ev-small__trigger-sampling-request', arguments: '{"prompt":"x"}' }] },
      { text: 'sampled' },
      { text: 'done' },
    );
    await send('sample');
    await turnsDone(1);
    expect(questions()).toHaveLength(0);
    expect(requests()[1]?.body.model).toBe('small-model');
    expect(toolMessages(2)[0]).toContain('"text": "sampled"');
  });
});

describe('a server question across a restart', () => {
  it('expires the card of a request that died with the process, and the re-run call asks anew', async () => {
    h = await startHarness({ overrides: { mcp: { servers: { ev: everythingStdio() } }, approvals: ALLOW } });
    await waitFor(() => h?.core.registry.get('mcp__ev__trigger-elicitation-request'), 'conditional tools', 15_000);
    h.llm.push({ toolCalls: [{ name: 'mcp__ev__trigger-elicitation-request', arguments: '{}' }] }, { text: 'done' });
    await h.send('form');
    const first = await nthQuestion(0);
    await h.restart();
    await waitFor(async () => (await card(first.id)).state === 'cancelled', 'the old card expired', 15_000);
    expect((await card(first.id)).question).toMatch(/⌛ Expired: switchboard restarted/);
    expect(await answer(first.id, 'Ada')).toMatchObject({ ok: false, reason: 'already_decided' });
    // The call that was running is re-run after the restart: the server asks again, on a new card.
    const again = await waitFor(
      () => h?.channel.eventsOf('question').find((q) => q.id !== first.id),
      'a new question',
      20_000,
    );
    expect(again.question).toMatch(/^🔌 MCP server "ev" asks:/);
    await answer(again.id, 'Cancel');
    await turnsDone(1);
  });
});

describe('requests outside any conversation', () => {
  it('are declined: elicitation with decline, sampling with an error', async () => {
    const host = new SwitchboardHost({
      servers: {},
      askTimeoutMs: 1000,
      maxSamplingTokens: 10,
      log: pino({ level: 'silent' }),
    });
    const signal = new AbortController().signal;
    expect(
      await host.elicit('ev', { message: 'hi', requestedSchema: { type: 'object', properties: {} } }, null, signal),
    ).toEqual({ action: 'decline' });
    await expect(host.sample('ev', { messages: [], maxTokens: 5 }, null, signal)).rejects.toThrow(
      /Sampling declined: no conversation is waiting/,
    );
    // A job run has no one to ask: "ask" is refused there.
    const scope = {
      key: 'c',
      owner: {
        channel: 'job',
        ask: async () => ({ kind: 'cancelled' }),
        sample: async () => ({ text: '', model: 'm', stopReason: 'endTurn' }),
      } as unknown as ToolContext,
      signal,
      hold: () => () => {},
    } satisfies CallScope<ToolContext>;
    await expect(host.sample('ev', { messages: [], maxTokens: 5 }, scope, signal)).rejects.toThrow(
      /Sampling is turned off/,
    );
  });
});
