/**
 * Several instances over one database (PostgreSQL, in `.ci/run`'s second half): every message answered once, in order per chat, with turns
 * spread over the instances, and decisions taken through one instance resuming turns run by
 * another.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Core } from '../../src/core/core.js';
import type { CoreEvent } from '../../src/contract/events.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { RecordingChannel } from '../helpers/recording-channel.js';
import { runs, testTools } from '../helpers/test-tools.js';
import { postgresOnly } from '../helpers/test-db.js';
import { skipped } from '../helpers/skips.js';
import { channelKinds } from '../../src/channels/registry.js';

let h: Harness | null = null;
let others: Core[] = [];
afterEach(async () => {
  for (const c of others) await c.close();
  others = [];
  await h?.close();
  h = null;
});

/** The model: `danger N` → call the danger tool, a tool result → `done N`, else `echo: TEXT`. */
function echoModel(body: { messages: Array<{ role: string; content: string | null }> }) {
  const last = body.messages.at(-1);
  if (last?.role === 'tool') {
    const asked = [...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    return { text: `done ${asked}` };
  }
  const text = last?.content ?? '';
  if (text.startsWith('danger '))
    return { toolCalls: [{ name: 'danger', arguments: JSON.stringify({ target: text.slice(7) }) }] };
  return { text: `echo: ${text}`, delayMs: 5 };
}

const onlyPostgres = postgresOnly('several instances in one process need a server, not one SQLite file');

// Several cores in one process need a database that serves concurrent connections without blocking
// the thread: better-sqlite3 waits for a lock synchronously (busy_timeout), so three cores over one
// SQLite file in one process would stall each other. SQLite is the single-instance store; this
// scale-out runs against PostgreSQL (the second half of `.ci/run`).
describe.skipIf(onlyPostgres !== undefined)(
  `several instances over one PostgreSQL database${skipped(onlyPostgres)}`,
  () => {
    it('30 chats over three instances: each message answered once, in order; approvals decided through another instance', async () => {
      for (const k of Object.keys(runs)) delete runs[k];
      h = await startHarness({ tools: testTools, overrides: { access: { rate_limit_per_minute: 10_000 } } });
      h.llm.setHandler(echoModel);
      const channels = [h.channel];
      const cores = [h.core];
      for (let i = 0; i < 2; i++) {
        const channel = new RecordingChannel();
        const core = await Core.open({ config: h.config, tools: testTools, sweepIntervalMs: 100, channelKinds });
        core.addChannel(channel);
        await core.start();
        others.push(core);
        cores.push(core);
        channels.push(channel);
      }
      const replies = () =>
        channels.flatMap((c) => c.eventsOf('reply').map((e) => (e as Extract<CoreEvent, { type: 'reply' }>).text));
      const approvals = () => channels.flatMap((c) => c.eventsOf('approval_requested'));

      const CHATS = 30;
      const PER_CHAT = 3;
      await Promise.all(
        Array.from({ length: CHATS }, async (_, chat) => {
          for (let n = 0; n < PER_CHAT; n++) {
            // Each message enters through another instance than the last one.
            const core = cores[(chat + n) % cores.length] as Core;
            const dangerous = chat % 10 === 0 && n === 1;
            const text = dangerous ? `danger c${chat}` : `c${chat} m${n}`;
            const r = await core.submit({
              channel: 'test',
              chatKey: `chat${chat}`,
              userId: 'u1',
              text,
              dedupKey: `test:${chat}:${n}`,
            });
            expect(r.status).toBe('queued');
            if (dangerous) {
              const req = await waitFor(
                () => approvals().find((a) => a.tool === 'danger' && a.preview.includes(`c${chat}`)),
                `approval of chat ${chat}`,
                20_000,
              );
              // The tap reaches an instance other than the one that took the message.
              const decider = cores[(chat + n + 1) % cores.length] as Core;
              expect((await decider.decideApproval({ id: req.id, decision: 'approve', by: 'test:u1' })).ok).toBe(true);
              await waitFor(() => replies().includes(`done danger c${chat}`), `resumed turn of chat ${chat}`, 20_000);
            } else {
              await waitFor(() => replies().includes(`echo: ${text}`), `reply to ${text}`, 20_000);
            }
            // The same update delivered again (a retry landing on any instance) is dropped.
            const again = await (cores[(chat + n + 2) % cores.length] as Core).submit({
              channel: 'test',
              chatKey: `chat${chat}`,
              userId: 'u1',
              text,
              dedupKey: `test:${chat}:${n}`,
            });
            expect(again.status).toBe('duplicate');
          }
        }),
      );
      for (const c of cores) await c.idle();

      // Nothing lost, nothing doubled.
      const all = replies();
      expect(all).toHaveLength(CHATS * PER_CHAT);
      expect(new Set(all).size).toBe(all.length);
      expect(runs.danger).toBe(CHATS / 10);
      // Per-chat order: the log alternates user and assistant in the order sent.
      const log = await h.core.db
        .selectFrom('messages')
        .innerJoin('conversations', 'conversations.id', 'messages.conversation_id')
        .select(['conversations.chat_key', 'messages.role', 'messages.content'])
        .where('messages.role', 'in', ['user', 'assistant'])
        .orderBy('messages.id')
        .execute();
      for (let chat = 0; chat < CHATS; chat++) {
        const users = log.filter((m) => m.chat_key === `chat${chat}` && m.role === 'user').map((m) => m.content);
        expect(users).toEqual(
          Array.from({ length: PER_CHAT }, (_, n) =>
            chat % 10 === 0 && n === 1 ? `danger c${chat}` : `c${chat} m${n}`,
          ),
        );
      }
      // Every turn finished; no lease is left held.
      const open = await h.core.db
        .selectFrom('turns')
        .select('id')
        .where('status', 'in', ['running', 'waiting'])
        .execute();
      expect(open).toEqual([]);
      const held = await h.core.db
        .selectFrom('leases')
        .select('name')
        .where('expires_at', '>', Date.now())
        .where('name', 'like', 'conv:%')
        .execute();
      expect(held).toEqual([]);
      // The work was spread: more than one instance ran turns.
      const claimed = await Promise.all(
        cores.map(async (c) => (await c.metrics.leaseClaims.get()).values.reduce((s, v) => s + v.value, 0)),
      );
      expect(claimed.filter((n) => n > 0).length).toBeGreaterThan(1);
    }, 120_000);
  },
);

describe('leases on conversations', () => {
  it('a turn whose instance stopped renewing its lease is taken over once the lease runs out', async () => {
    h = await startHarness({ tools: testTools, overrides: { store: { lease_seconds: 2 } } });
    h.llm.setHandler(echoModel);
    const conv = (await h.send('first')) as { conversationId: string };
    await waitFor(() => h?.channel.eventsOf('reply').length, 'first reply');
    await h.core.idle();
    // This instance keeps the lease a moment after the turn (SQLite); wait until it gave it up.
    await waitFor(
      async () =>
        (
          await h?.core.db
            .selectFrom('leases')
            .select('expires_at')
            .where('name', '=', `conv:${conv.conversationId}`)
            .executeTakeFirst()
        )?.expires_at === 0,
      'the lease given up',
    );
    // A crashed instance elsewhere: its lease on the conversation is live, its queued message and
    // running turn untouched. Nobody may run the conversation until the lease runs out.
    const now = Date.now();
    await h.core.db
      .insertInto('leases')
      .values({
        name: `conv:${conv.conversationId}`,
        holder: 'other-host:1:dead',
        token: 7,
        expires_at: now + 1500,
        taken_over: 0,
        claimed_at: now,
      })
      .onConflict((oc) =>
        oc.column('name').doUpdateSet({ holder: 'other-host:1:dead', token: 7, expires_at: now + 1500 }),
      )
      .execute();
    await h.send('second');
    // The message is queued (the event that proves it was received), and no reply comes while the
    // other holder's lease is live: the reply is first seen only after the lease's expiry.
    await waitFor(
      async () =>
        (await h?.core.db.selectFrom('inbox').select('id').where('conversation_id', '=', conv.conversationId).execute())
          ?.length,
      'the second message queued',
    );
    let repliedAt = 0;
    await waitFor(
      () => {
        if (h?.channel.eventsOf('reply').length === 2) repliedAt = Date.now();
        return repliedAt;
      },
      'reply after takeover',
      10_000,
    );
    expect(repliedAt).toBeGreaterThanOrEqual(now + 1500);
    expect(h.channel.eventsOf('reply').map((e) => e.text)).toEqual(['echo: first', 'echo: second']);
    expect((await h.core.metrics.leaseTakeovers.get()).values.reduce((s, v) => s + v.value, 0)).toBe(1);
  });
});
