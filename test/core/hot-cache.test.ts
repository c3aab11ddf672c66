import { afterEach, describe, expect, it, vi } from 'vitest';
import { Core } from '../../src/core/core.js';
import { hotCache } from '../../src/store/hot-cache.js';
import { deleteMemory } from '../../src/store/repos/memories.js';
import { insertSummary } from '../../src/store/repos/summaries.js';
import { bumpVersion } from '../../src/store/repos/versions.js';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';
import { writeInOtherProcess } from '../helpers/store-writer.js';
import { testTools } from '../helpers/test-tools.js';
import { channelKinds } from '../../src/channels/registry.js';

let h: Harness;
let other: Core | null = null;
afterEach(async () => {
  await other?.close();
  other = null;
  await h.close();
});

/** Send `text`, let the model answer `answer`, and return the chat request of that turn. */
async function turn(text: string, answer: string) {
  const before = h.llm.chatRequests().length;
  h.llm.push({ text: answer });
  await h.send(text);
  await waitFor(() => h.channel.eventsOf('reply').some((e) => e.text === answer), `reply ${answer}`);
  await h.core.idle();
  const requests = h.llm.chatRequests();
  expect(requests).toHaveLength(before + 1);
  const body = requests[before]?.body;
  return {
    tools: (body.tools ?? []).map((t: { function: { name: string } }) => t.function.name) as string[],
    system: String(body.messages[0]?.content ?? ''),
    model: String(body.model),
  };
}

describe('state held in memory, written through another process', () => {
  it('rules, memories, the scratchpad and the model changed by another process are used at the next turn', {
    timeout: 60_000,
  }, async () => {
    h = await startHarness({ tools: testTools });
    const first = await turn('hello', 'one');
    expect(first.tools).toContain('danger');
    expect(first.system).not.toContain('blue-green');
    const conversationId = h.events.find((e) => e.event.type === 'turn_started')?.conversationId as string;

    // Another process over the same database (its own connection, its own memory) writes.
    writeInOtherProcess(h.config.store.database_url, [
      { op: 'denyTool', tool: 'danger' },
      { op: 'remember', owner: 'test:u1', key: 'deploy', value: 'use blue-green deploys' },
      { op: 'scratchpad', conversationId, text: 'Plan: migrate first.' },
      { op: 'model', conversationId, model: 'model-b' },
    ]);

    const second = await turn('again', 'two');
    expect(second.tools).not.toContain('danger');
    expect(second.system).toContain('deploy: use blue-green deploys');
    expect(second.system).toContain('Plan: migrate first.');
    expect(second.model).toBe('model-b');

    writeInOtherProcess(h.config.store.database_url, [
      { op: 'deleteRules' },
      { op: 'forget', owner: 'test:u1', key: 'deploy' },
      { op: 'scratchpad', conversationId, text: null },
      { op: 'model', conversationId, model: null },
    ]);

    const third = await turn('once more', 'three');
    expect(third.tools).toContain('danger');
    expect(third.system).not.toContain('blue-green');
    expect(third.system).not.toContain('Plan: migrate first.');
    expect(third.model).toBe(h.config.llm.model);

    // `/new` through another process: the chat's next message starts a new conversation at once
    // (the chat key's conversation is held in memory, and checked against the counters).
    writeInOtherProcess(h.config.store.database_url, [{ op: 'archive', conversationId }]);
    h.llm.push({ text: 'fresh start' });
    await h.send('a new topic');
    await waitFor(
      () => h.channel.eventsOf('reply').some((e) => e.text === 'fresh start'),
      'reply in the new conversation',
    );
    await h.core.idle();
    const started = h.events.filter((e) => e.event.type === 'turn_started').map((e) => e.conversationId);
    expect(started.at(-1)).not.toBe(conversationId);
    const body = h.llm.chatRequests().at(-1)?.body;
    const history = ((body?.messages ?? []) as Array<{ role: string; content: string }>)
      .filter((m) => m.role === 'user')
      .map((m) => m.content);
    expect(history).toEqual(['a new topic']);
  });

  it('between checks the copy in memory answers; a counter bumped by another process drops it at the next check', async () => {
    h = await startHarness({ tools: testTools });
    other = await Core.open({ config: h.config, tools: testTools, channelKinds });
    const cache = hotCache(h.core.db);
    // Frozen clock: the copy never ages out here, so only the counters can make it re-read.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      await cache.refresh();
      expect(await cache.memories('test:u1', 10)).toEqual([]);
      // What another process's `remember` does (its own connection, its own process-local
      // write count, which this process never sees): the row and the counter in one commit.
      await other.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('memories')
          .values({ owner: 'test:u1', key: 'k', value: 'v', created_by: null, created_at: 1, updated_at: 1 })
          .execute();
        await bumpVersion(trx, 'memories');
      });
      expect(await cache.memories('test:u1', 10)).toEqual([]);
      await cache.refresh();
      expect((await cache.memories('test:u1', 10)).map((m) => m.key)).toEqual(['k']);
      // A write through this process is read back at once, without waiting for a check.
      expect(await deleteMemory(h.core.db, 'test:u1', 'k')).toBe(true);
      expect(await cache.memories('test:u1', 10)).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a conversation's newest summary is held between checks; one written by another process is read at the next check, one written here at once", async () => {
    h = await startHarness({ tools: testTools });
    await turn('hello', 'one');
    const conversationId = h.events.find((e) => e.event.type === 'turn_started')?.conversationId as string;
    other = await Core.open({ config: h.config, tools: testTools, channelKinds });
    const cache = hotCache(h.core.db);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      await cache.refresh();
      expect(await cache.latestSummary(conversationId)).toBeUndefined();
      // Another process's summary: the row and the counter in one commit.
      await other.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('summaries')
          .values({ conversation_id: conversationId, upto_message_id: 1, content: 'from elsewhere', created_at: 1 })
          .execute();
        await bumpVersion(trx, 'summaries');
      });
      expect(await cache.latestSummary(conversationId)).toBeUndefined();
      await cache.refresh();
      expect((await cache.latestSummary(conversationId))?.content).toBe('from elsewhere');
      // insertSummary bumps the counter: this process reads its own summary back at once.
      await insertSummary(h.core.db, conversationId, 2, 'written here');
      expect(await cache.latestSummary(conversationId)).toMatchObject({ upto: 2, content: 'written here' });
    } finally {
      vi.useRealTimers();
    }
  });
});
