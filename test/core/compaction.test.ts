/** Long conversations: old turns folded into a model-written summary instead of silently dropped. */
import { afterEach, describe, expect, it } from 'vitest';
import { SUMMARISED_NOTICE, SUMMARY_PROMPT } from '../../src/core/compaction.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const BUDGET = 500;
const turns = (n: number) =>
  waitFor(() => h?.events.filter((e) => e.event.type === 'turn_done').length === n, `${n} turns`, 20_000);
const isSummary = (body: any) => body.messages[0]?.content === SUMMARY_PROMPT;
/** What the history budget counts for a request (the estimate: `test-model` is not an OpenAI name). */
const tokensOf = (body: any) =>
  body.messages.reduce(
    (a: number, m: any) =>
      a +
      Math.ceil(((m.content ?? '') as string).length / 4) +
      (m.tool_calls ? Math.ceil(JSON.stringify(m.tool_calls).length / 4) : 0) +
      4,
    0,
  );
const filler = (i: number) => `Message ${i}: ${'the weather was talked about at length and nothing else. '.repeat(5)}`;

/** A summariser that keeps the code word when it sees it (in the messages or the previous summary). */
function summariser(body: any) {
  const input = body.messages[1].content as string;
  return {
    text: input.includes('PINEAPPLE-42')
      ? 'The user said their code word is PINEAPPLE-42. Then small talk.'
      : 'Small talk.',
  };
}

/** Every tool result in a request follows the assistant message that made its call. */
function toolCallsPaired(body: any): boolean {
  const open = new Set<string>();
  for (const m of body.messages) {
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) open.add(c.id);
    if (m.role === 'tool' && !open.has(m.tool_call_id)) return false;
  }
  return true;
}

describe('compaction', () => {
  it('keeps a fact of the first turn, in the summary, in the last request; every request stays within the budget; the log keeps everything', async () => {
    h = await startHarness({ overrides: { llm: { context_tokens: BUDGET } } });
    h.llm.setHandler((body) => {
      if (isSummary(body)) return summariser(body);
      const last = body.messages.at(-1);
      // One tool call in the second turn: it must never be separated from its result.
      if (last.role === 'user' && String(last.content).startsWith('Message 1:'))
        return { toolCalls: [{ name: 'list_files', arguments: '{}' }] };
      return { text: `Noted. ${'Yes, indeed. '.repeat(10)}` };
    });
    await h.send('My code word is PINEAPPLE-42. Please remember it for this chat.');
    await turns(1);
    for (let i = 1; i <= 8; i++) {
      await h.send(filler(i));
      await turns(i + 1);
    }
    const requests = h.llm.chatRequests().map((r) => r.body);
    const rounds = requests.filter((b) => !isSummary(b));
    const summaries = requests.filter(isSummary);
    expect(summaries.length).toBeGreaterThan(0);
    for (const b of rounds) expect(tokensOf(b)).toBeLessThanOrEqual(BUDGET);
    for (const b of summaries) expect(tokensOf(b)).toBeLessThanOrEqual(BUDGET);
    for (const b of rounds) expect(toolCallsPaired(b)).toBe(true);
    const last = rounds.at(-1);
    expect(last.messages[0].content).toContain('PINEAPPLE-42');
    expect(JSON.stringify(last.messages.slice(1))).not.toContain('PINEAPPLE-42');
    // The chat was told, once per summary.
    const notices = h.events.filter((e) => e.event.type === 'notification' && e.event.text === SUMMARISED_NOTICE);
    const rows = await h.core.db.selectFrom('summaries').selectAll().execute();
    expect(rows.length).toBeGreaterThan(0);
    // A fold may take several requests (chunks); each stored summary was announced once.
    expect(notices.length).toBe(rows.length);
    const messages = await h.core.db.selectFrom('messages').select('content').where('role', '=', 'user').execute();
    expect(messages).toHaveLength(9);
    expect(messages[0]?.content).toContain('PINEAPPLE-42');
    const usage = await h.core.db.selectFrom('model_usage').select('kind').where('kind', '=', 'summary').execute();
    expect(usage.length).toBe(summaries.length);
  });

  it('summarises a history already larger than the window (one huge paste) in chunks with a marked excerpt', async () => {
    h = await startHarness({ overrides: { llm: { context_tokens: BUDGET } } });
    h.llm.setHandler((body) => (isSummary(body) ? summariser(body) : { text: 'ok' }));
    await h.send(`Code word PINEAPPLE-42. Log follows: ${'x'.repeat(20_000)} END-OF-LOG`);
    await turns(1);
    await h.send('and now?');
    await turns(2);
    const summaries = h.llm
      .chatRequests()
      .map((r) => r.body)
      .filter(isSummary);
    expect(summaries.length).toBeGreaterThan(0);
    for (const b of summaries) expect(tokensOf(b)).toBeLessThanOrEqual(BUDGET);
    expect(summaries[0].messages[1].content).toMatch(/\[… \d+ characters cut from this message …\]/);
    const rounds = h.llm
      .chatRequests()
      .map((r) => r.body)
      .filter((b) => !isSummary(b));
    expect(rounds.at(-1).messages[0].content).toContain('PINEAPPLE-42');
    expect(tokensOf(rounds.at(-1))).toBeLessThanOrEqual(BUDGET);
  });

  it('an empty summary is reported and never recorded; the turn is still answered', async () => {
    h = await startHarness({ overrides: { llm: { context_tokens: BUDGET } } });
    h.llm.setHandler((body) => (isSummary(body) ? { text: '' } : { text: `Reply. ${'More words here. '.repeat(8)}` }));
    for (let i = 1; i <= 6; i++) {
      await h.send(filler(i));
      await turns(i);
    }
    expect(await h.core.db.selectFrom('summaries').selectAll().execute()).toEqual([]);
    const errors = h.events
      .filter((e) => e.event.type === 'error')
      .map((e) => (e.event as { message: string }).message);
    expect(errors[0]).toBe(
      'Earlier messages could not be summarised (the model returned an empty summary); the oldest ones are left out of what the model sees for now.',
    );
    // Reported once, not on every round (it is retried a minute later).
    expect(errors).toHaveLength(1);
    expect(h.channel.eventsOf('turn_done').every((t) => t.status === 'done')).toBe(true);
    for (const b of h.llm
      .chatRequests()
      .map((r) => r.body)
      .filter((b) => !isSummary(b)))
      expect(tokensOf(b)).toBeLessThanOrEqual(BUDGET);
  });

  it('a failed summary request (HTTP 500) is reported and never recorded', async () => {
    h = await startHarness({ overrides: { llm: { context_tokens: BUDGET, max_retries: 0 } } });
    h.llm.setHandler((body) =>
      isSummary(body) ? { status: 500 } : { text: `Reply. ${'More words here. '.repeat(8)}` },
    );
    for (let i = 1; i <= 5; i++) {
      await h.send(filler(i));
      await turns(i);
    }
    expect(await h.core.db.selectFrom('summaries').selectAll().execute()).toEqual([]);
    const errors = h.events
      .filter((e) => e.event.type === 'error')
      .map((e) => (e.event as { message: string }).message);
    expect(errors[0]).toMatch(/^Earlier messages could not be summarised \(the model endpoint answered HTTP 500/);
  });

  it('llm.compaction = false leaves the oldest turns out without a summary request', async () => {
    h = await startHarness({ overrides: { llm: { context_tokens: BUDGET, compaction: false } } });
    h.llm.setHandler(() => ({ text: `Reply. ${'More words here. '.repeat(8)}` }));
    for (let i = 1; i <= 5; i++) {
      await h.send(filler(i));
      await turns(i);
    }
    expect(h.llm.chatRequests().some((r) => isSummary(r.body))).toBe(false);
    for (const r of h.llm.chatRequests()) expect(tokensOf(r.body)).toBeLessThanOrEqual(BUDGET);
  });

  it('/compact folds every turn but the newest on request; the next request carries the summary; nothing to fold is said so', async () => {
    h = await startHarness();
    h.llm.setHandler((body) => (isSummary(body) ? summariser(body) : { text: 'fine' }));
    const ref = { channel: 'test', chatKey: 'chat1' };
    expect(await h.core.compact(ref, 'test:u1')).toBe('Nothing to summarise yet.');
    await h.send('My code word is PINEAPPLE-42.');
    await turns(1);
    expect(await h.core.compact(ref, 'test:u1')).toBe(
      'Nothing to summarise yet: the conversation has only its newest turn.',
    );
    await h.send('How are you?');
    await turns(2);
    await h.send('Nice weather.');
    await turns(3);
    expect(await h.core.compact(ref, 'test:u1')).toBe(
      'Summarised 2 earlier turns; the model sees the summary from now on.',
    );
    await h.send('What was my code word?');
    await turns(4);
    const last = h.llm.chatRequests().at(-1)?.body;
    expect(last.messages[0].content).toContain('The user said their code word is PINEAPPLE-42.');
    expect(last.messages.slice(1).map((m: any) => m.content)).toEqual([
      'Nice weather.',
      'fine',
      'What was my code word?',
    ]);
    const usage = await h.core.db
      .selectFrom('model_usage')
      .select(['kind', 'requester_id'])
      .where('kind', '=', 'summary')
      .execute();
    expect(usage).toEqual([{ kind: 'summary', requester_id: 'test:u1' }]);
    expect(await h.core.usage('test:u1')).toMatch(/^Today \(UTC\): \d+ tokens/);
  });
});
