/** Usage: tokens per request stored and counted, `/usage` figures, the daily limit, reasoning deltas kept out of answers. */
import { afterEach, describe, expect, it } from 'vitest';
import { usageText } from '../../src/core/usage.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const turns = (n: number) =>
  waitFor(() => h?.events.filter((e) => e.event.type === 'turn_done').length === n, `${n} turns`, 20_000);

describe('usage', () => {
  it('stores the reported usage per request, counts it in /metrics by kind and model, and sums it for /usage', async () => {
    h = await startHarness();
    h.llm.push(
      { toolCalls: [{ name: 'list_files', arguments: '{}' }] },
      { text: 'done', usage: { prompt: 300, completion: 40 } },
    );
    await h.send('list');
    await turns(1);
    const rows = await h.core.db.selectFrom('model_usage').selectAll().orderBy('id').execute();
    expect(rows.map((r) => [r.requester_id, r.model, r.kind, r.prompt_tokens, r.completion_tokens])).toEqual([
      ['test:u1', 'test-model', 'turn', 12, 6],
      ['test:u1', 'test-model', 'turn', 300, 40],
    ]);
    const metrics = await h.core.metrics.registry.metrics();
    expect(metrics).toContain('switchboard_tokens_total{kind="prompt",model="test-model"} 312');
    expect(metrics).toContain('switchboard_tokens_total{kind="completion",model="test-model"} 46');
    const text = await usageText(h.core.db, h.config, 'test:u1');
    expect(text).toContain('Today (UTC): 358 tokens (312 prompt, 46 completion)');
    expect(text).toContain('This month: 358 tokens');
    expect(await usageText(h.core.db, h.config, 'test:u2')).toContain('Today (UTC): 0 tokens');
    // Yesterday's tokens count for the month only (when yesterday is in this month).
    const now = Date.UTC(2026, 11, 15, 12);
    await h.core.db
      .insertInto('model_usage')
      .values({
        conversation_id: 'x',
        turn_id: null,
        requester_id: 'test:u3',
        model: 'm',
        kind: 'turn',
        prompt_tokens: 7,
        completion_tokens: 3,
        created_at: now - 86_400_000,
      })
      .execute();
    const u3 = await usageText(h.core.db, h.config, 'test:u3', now);
    expect(u3).toContain('Today (UTC): 0 tokens');
    expect(u3).toContain('This month: 10 tokens');
  });

  it('access.daily_tokens_per_user refuses further turns for the day with a clear message; admins are exempt', async () => {
    h = await startHarness({ overrides: { access: { daily_tokens_per_user: 150, admins: ['test:u2'] } } });
    h.llm.push(
      { text: 'one', usage: { prompt: 100, completion: 20 } },
      { text: 'two', usage: { prompt: 100, completion: 20 } },
    );
    await h.send('first');
    await turns(1);
    await h.send('second');
    await turns(2);
    await h.send('third');
    await turns(3);
    expect(h.llm.chatRequests()).toHaveLength(2);
    const errors = h.channel.eventsOf('error').map((e) => e.message);
    expect(errors.at(-1)).toMatch(
      /^You have used your 150 tokens for today \(access\.daily_tokens_per_user\); the limit resets at midnight UTC/,
    );
    expect(h.channel.eventsOf('turn_done').at(-1)?.status).toBe('failed');
    // An admin past the limit is still answered.
    await h.core.db
      .insertInto('model_usage')
      .values({
        conversation_id: 'x',
        turn_id: null,
        requester_id: 'test:u2',
        model: 'm',
        kind: 'turn',
        prompt_tokens: 1000,
        completion_tokens: 0,
        created_at: Date.now(),
      })
      .execute();
    h.llm.push({ text: 'for the admin' });
    await h.send('admin here', { userId: 'u2', chatKey: 'chat2' });
    await turns(4);
    expect(h.llm.chatRequests()).toHaveLength(3);
    expect(h.channel.eventsOf('reply').at(-1)?.text).toBe('for the admin');
  });

  it.each(['reasoning_content', 'reasoning'] as const)(
    '%s deltas are never shown, stored nor sent back as the answer',
    async (field) => {
      h = await startHarness();
      h.llm.push(
        { text: 'The answer is 4.', reasoning: { text: 'hidden chain of thought about 2+2', field } },
        { text: 'ok' },
      );
      await h.send('2+2?');
      await turns(1);
      await h.send('thanks');
      await turns(2);
      const shown = [
        ...h.channel.eventsOf('delta').map((e) => e.text),
        ...h.channel.eventsOf('reply').map((e) => e.text),
      ].join('');
      expect(shown).not.toContain('hidden');
      expect(h.channel.eventsOf('reply')[0]?.text).toBe('The answer is 4.');
      const stored = await h.core.db.selectFrom('messages').select('content').where('role', '=', 'assistant').execute();
      expect(stored.map((m) => m.content)).toEqual(['The answer is 4.', 'ok']);
      expect(JSON.stringify(h.llm.chatRequests()[1]?.body.messages)).not.toContain('hidden');
    },
  );
});
