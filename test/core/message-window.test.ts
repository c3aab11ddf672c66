/**
 * The message window kept in memory between model rounds: it reads only new rows, covers the
 * budget with whole turns, and sees rows written through another database handle (another
 * process or instance) at the next read.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Db, migrateToLatest } from '../../src/store/db.js';
import { MessageWindows } from '../../src/store/message-window.js';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import { insertMessage, listMessages } from '../../src/store/repos/log.js';
import type { Message } from '../../src/store/schema.js';
import { openTestDatabase } from '../helpers/test-db.js';

const handles: Db[] = [];
afterEach(async () => {
  for (const h of handles.splice(0)) await h.destroy();
});

/** Every message costs its length: a turn of a question and an answer of 10 characters each costs 20. */
const cost = (m: Message) => m.content?.length ?? 0;

async function addTurn(db: Db, conversationId: string, turn: string): Promise<void> {
  await insertMessage(db, {
    conversation_id: conversationId,
    turn_id: turn,
    role: 'user',
    content: `${turn}-q`.padEnd(10, '.'),
    tool_calls: null,
    tool_call_id: null,
    author_id: 'u',
  });
  await insertMessage(db, {
    conversation_id: conversationId,
    turn_id: turn,
    role: 'assistant',
    content: `${turn}-a`.padEnd(10, '.'),
    tool_calls: null,
    tool_call_id: null,
    author_id: null,
  });
}

describe('message window', () => {
  it('extends with new rows, drops whole old turns only while the rest covers the budget, and sees another handle’s rows', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-window-'));
    const db = openTestDatabase(dir);
    handles.push(db);
    await migrateToLatest(db);
    const other = openTestDatabase(dir);
    handles.push(other);
    const conv = await ensureConversation(db, { channel: 'test', chatKey: 'w', threadKey: '' }, 'u');
    const windows = new MessageWindows(db);

    expect(await windows.recent(conv.id, 50, cost)).toEqual([]);
    for (const t of ['t1', 't2']) await addTurn(db, conv.id, t);
    expect((await windows.recent(conv.id, 50, cost)).map((m) => m.content?.slice(0, 4))).toEqual([
      't1-q',
      't1-a',
      't2-q',
      't2-a',
    ]);

    // Two more turns, one through another handle: 80 characters in all, budget 50. Dropping t1
    // leaves 60 (still covers 50); dropping t2 too would leave 40, so t2 stays, whole.
    await addTurn(db, conv.id, 't3');
    await addTurn(other, conv.id, 't4');
    const window = await windows.recent(conv.id, 50, cost);
    expect(window.map((m) => m.content?.slice(0, 4))).toEqual(['t2-q', 't2-a', 't3-q', 't3-a', 't4-q', 't4-a']);
    // Always the newest rows of the log, in order.
    const all = await listMessages(db, conv.id);
    expect(window.map((m) => m.id)).toEqual(all.slice(-window.length).map((m) => m.id));

    // A changed budget reads the window afresh.
    const wide = await windows.recent(conv.id, 1000, cost);
    expect(wide.map((m) => m.id)).toEqual(all.map((m) => m.id));
    // The caller gets its own array: changing it does not change the window.
    wide.length = 0;
    expect(await windows.recent(conv.id, 1000, cost)).toHaveLength(8);
  });
});
