/** The end of a model round in the store: what one transaction writes, and when it ends the turn. */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Db, migrateToLatest } from '../../src/store/db.js';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import { enqueueInbox } from '../../src/store/repos/log.js';
import { endRound, type RoundResult } from '../../src/store/repos/message-steps.js';
import { createTurn, finishTurn, getTurn } from '../../src/store/repos/turns.js';
import { openTestDatabase } from '../helpers/test-db.js';

let db: Db | null = null;
afterEach(async () => {
  await db?.destroy();
  db = null;
});

async function setUp() {
  db = openTestDatabase(mkdtempSync(path.join(os.tmpdir(), 'sb-round-end-')));
  await migrateToLatest(db);
  const conversation = await ensureConversation(db, { channel: 'test', chatKey: 'chat', threadKey: '' }, 'test:u');
  const turn = await createTurn(db, conversation.id, 'test:u');
  const round = (extra: Partial<RoundResult> = {}): RoundResult => ({
    turnId: turn.id,
    conversationId: conversation.id,
    content: 'the answer',
    toolCalls: null,
    calls: [],
    usage: { prompt: 100, completion: 7 },
    finishIfIdle: true,
    ...extra,
  });
  const assistantMessages = () =>
    (db as Db)
      .selectFrom('messages')
      .select('content')
      .where('conversation_id', '=', conversation.id)
      .where('role', '=', 'assistant')
      .execute();
  return { db, conversation, turn, round, assistantMessages };
}

describe('the end of a model round', () => {
  it('a final answer with nothing queued counts the round and ends the turn as done', async () => {
    const { db, turn, round, assistantMessages } = await setUp();
    const stored = await endRound(db, round());
    expect(stored).toMatchObject({ stored: true, finished: true });
    const row = await getTurn(db, turn.id);
    expect(row).toMatchObject({ status: 'done', rounds: 1, prompt_tokens: 100, completion_tokens: 7, error: null });
    expect(row?.finished_at).toBeGreaterThan(0);
    expect(await assistantMessages()).toEqual([{ content: 'the answer' }]);
  });

  it('a final answer while a message is queued counts the round and leaves the turn running for it', async () => {
    const { db, conversation, turn, round } = await setUp();
    await enqueueInbox(db, { conversationId: conversation.id, authorId: 'test:u', text: 'one more thing' });
    expect(await endRound(db, round())).toMatchObject({ stored: true, finished: false });
    expect(await getTurn(db, turn.id)).toMatchObject({
      status: 'running',
      rounds: 1,
      prompt_tokens: 100,
      finished_at: null,
    });
  });

  it('a round with tool calls counts the round and never ends the turn', async () => {
    const { db, turn, round } = await setUp();
    const calls = [{ id: 'call_1', name: 'echo', arguments: '{}' }];
    expect(await endRound(db, round({ content: null, toolCalls: JSON.stringify(calls), calls }))).toMatchObject({
      stored: true,
      finished: false,
    });
    expect(await getTurn(db, turn.id)).toMatchObject({ status: 'running', rounds: 1 });
    expect(await db.selectFrom('tool_calls').select(['id', 'status']).where('turn_id', '=', turn.id).execute()).toEqual(
      [{ id: 'call_1', status: 'pending' }],
    );
  });

  it('a turn stopped meanwhile gets nothing: no round counted, no message, the writes of the same commit left out', async () => {
    const { db, turn, round, assistantMessages } = await setUp();
    expect(await finishTurn(db, turn.id, 'cancelled')).toBe(true);
    let alsoWrote = false;
    const stored = await endRound(
      db,
      round({
        alsoWrite: async () => {
          alsoWrote = true;
        },
      }),
    );
    expect(stored).toEqual({ stored: false });
    expect(alsoWrote).toBe(false);
    expect(await getTurn(db, turn.id)).toMatchObject({ status: 'cancelled', rounds: 0, prompt_tokens: 0 });
    expect(await assistantMessages()).toEqual([]);
  });
});
