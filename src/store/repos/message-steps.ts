/**
 * The writes of one message's path, grouped into one transaction per step: on receipt (the
 * de-duplication key and the inbox row, or the turn itself when the conversation is idle and its
 * runner free), at turn start (the turn and the queued messages it answers) and at the end of a
 * model round (the assistant message, its tool calls, the usage and, for a final answer with
 * nothing queued, the turn's end). Fewer commits per message, and no state in between for a crash
 * to leave behind.
 */
import type { Db } from '../db.js';
import type { InboxItem, Turn } from '../schema.js';
import { markInboundSeen } from './conversations.js';
import { enqueueInbox, insertMessage, pendingInbox } from './log.js';
import { preparedWrite } from '../prepared.js';
import { activeTurn, addFinalRound, addRound, createTurn, insertToolCalls } from './turns.js';

/** A message to queue for a conversation. */
export interface IncomingMessage {
  /** The platform's de-duplication key, when it has one. */
  dedupKey?: string;
  conversationId: string;
  authorId: string;
  text: string;
  attachments?: string[];
}

/** On receipt: record the key and queue the message. False (nothing written) for a duplicate. */
export async function receiveMessage(db: Db, message: IncomingMessage): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (message.dedupKey && !(await markInboundSeen(trx, message.dedupKey))) return false;
    await enqueueInbox(trx, message);
    return true;
  });
}

const consumeQuery = preparedWrite((db: Db, id: number, consumedAt: number) =>
  db.updateTable('inbox').set({ consumed_at: consumedAt }).where('id', '=', id).where('consumed_at', 'is', null),
);

/**
 * Move inbox items into the log as user messages (within the caller's transaction).
 * Returns the id of the last message written.
 */
export async function consumeInboxItems(
  trx: Db,
  conversationId: string,
  turnId: string,
  items: InboxItem[],
): Promise<number> {
  let lastId = 0;
  for (const item of items) {
    const files: string[] = item.attachments ? JSON.parse(item.attachments) : [];
    lastId = await insertUserMessage(trx, conversationId, turnId, item.author_id, item.text, files);
    await consumeQuery(trx, item.id, Date.now());
  }
  return lastId;
}

/** A user message in the log, with the files that came with it named for the model. */
function insertUserMessage(
  trx: Db,
  conversationId: string,
  turnId: string,
  authorId: string,
  text: string,
  files: string[],
): Promise<number> {
  const content = files.length ? `${text}\n\n[Files the user sent, in the workspace: ${files.join(', ')}]` : text;
  return insertMessage(trx, {
    conversation_id: conversationId,
    turn_id: turnId,
    role: 'user',
    content,
    tool_calls: null,
    tool_call_id: null,
    author_id: authorId,
  });
}

/** A turn just started, and the id of the newest user message it answers. */
export interface StartedTurn {
  turn: Turn;
  lastMessageId: number;
}

/**
 * At turn start: create the turn for the oldest queued message and move every queued message into
 * the log, in one transaction. Undefined when nothing is queued.
 */
export async function startTurn(db: Db, conversationId: string): Promise<StartedTurn | undefined> {
  return db.transaction().execute(async (trx) => {
    const items = await pendingInbox(trx, conversationId);
    const first = items[0];
    if (!first) return undefined;
    const turn = await createTurn(trx, conversationId, first.author_id);
    const lastMessageId = await consumeInboxItems(trx, conversationId, turn.id, items);
    return { turn, lastMessageId };
  });
}

/**
 * On receipt, for a conversation with no unfinished turn whose runner is known to be free (the
 * caller holds its lease and runs nothing for it): record the key and start the turn with the
 * message itself, in one transaction. The message goes straight into the log, after anything
 * still queued (another process may have queued messages meanwhile), instead of through the
 * inbox: a write, a read, an update and a commit fewer per message. A crash after the commit
 * leaves a running turn whose newest message is the user's, which the next start resumes like
 * any turn started from the inbox. `'unfinished'` (nothing written) when the conversation has an
 * unfinished turn: the message may be a note or an answer for it, or is to be queued for it (the
 * caller's way for a chat with a turn in progress); false (nothing written) for a duplicate.
 */
export async function receiveStartingTurn(
  db: Db,
  message: IncomingMessage,
): Promise<StartedTurn | 'unfinished' | false> {
  return db.transaction().execute(async (trx) => {
    // Looked for here, in the transaction that would start the turn: no turn can start between
    // this look-up and the new one.
    if (await activeTurn(trx, message.conversationId)) return 'unfinished';
    if (message.dedupKey && !(await markInboundSeen(trx, message.dedupKey))) return false;
    const queued = await pendingInbox(trx, message.conversationId);
    const turn = await createTurn(trx, message.conversationId, queued[0]?.author_id ?? message.authorId);
    await consumeInboxItems(trx, message.conversationId, turn.id, queued);
    const lastMessageId = await insertUserMessage(
      trx,
      message.conversationId,
      turn.id,
      message.authorId,
      message.text,
      message.attachments ?? [],
    );
    return { turn, lastMessageId };
  });
}

/** What a model round produced, to store. */
export interface RoundResult {
  turnId: string;
  conversationId: string;
  content: string | null;
  /** JSON of the calls, or null. */
  toolCalls: string | null;
  calls: Array<{ id: string; name: string; arguments: string }>;
  usage: { prompt: number; completion: number };
  /** End the turn as done in the same transaction when this is a final answer and nothing is queued. */
  finishIfIdle: boolean;
  /** Further writes of the same commit (e.g. the delivery rows that show the message). */
  alsoWrite?: (trx: Db) => Promise<void>;
}

/** Outcome of {@link endRound}. */
export type RoundStored = { stored: false } | { stored: true; messageId: number; finished: boolean };

/**
 * At the end of a model round: the assistant message, its tool calls and the usage, and the
 * turn's end when `finishIfIdle` holds and no message is queued — one transaction. Nothing is
 * written when the turn ended meanwhile (stopped from a chat or another process).
 */
export async function endRound(db: Db, round: RoundResult): Promise<RoundStored> {
  return db.transaction().execute(async (trx) => {
    // A final answer counts the round and ends the turn in one statement (the check for a queued
    // message is then made first: within the transaction, as before, so a message queued after it
    // is found by the runner the receipt wakes, as any message for a finished turn).
    const final = round.finishIfIdle && round.calls.length === 0;
    let finished = false;
    if (final) {
      const r = await addFinalRound(trx, round.turnId, round.usage.prompt, round.usage.completion);
      if (!r.counted) return { stored: false };
      finished = r.finished;
    } else if (!(await addRound(trx, round.turnId, round.usage.prompt, round.usage.completion)))
      return { stored: false };
    const row = {
      id: await insertMessage(trx, {
        conversation_id: round.conversationId,
        turn_id: round.turnId,
        role: 'assistant',
        content: round.content,
        tool_calls: round.toolCalls,
        tool_call_id: null,
        author_id: null,
      }),
    };
    if (round.calls.length) {
      await insertToolCalls(
        trx,
        round.calls.map((c, position) => ({
          id: c.id,
          conversation_id: round.conversationId,
          turn_id: round.turnId,
          message_id: row.id,
          position,
          name: c.name,
          args: c.arguments,
        })),
      );
    }
    await round.alsoWrite?.(trx);
    return { stored: true, messageId: row.id, finished };
  });
}

/** One tool result for the log: the call it answers and the text the model sees. */
export interface ToolResultMessage {
  callId: string;
  content: string;
}

/**
 * Write one `tool` message per result, in the given (the model's) order, after the assistant
 * message `afterMessageId` that made the calls; results already written (a phase re-run after a
 * crash) are skipped. One transaction.
 */
export async function writeToolResults(
  db: Db,
  conversationId: string,
  turnId: string,
  afterMessageId: number,
  results: ToolResultMessage[],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('messages')
      .select('tool_call_id')
      .where('conversation_id', '=', conversationId)
      .where('role', '=', 'tool')
      .where('id', '>', afterMessageId)
      .execute();
    const written = new Set(existing.map((r) => r.tool_call_id));
    for (const r of results) {
      if (written.has(r.callId)) continue;
      await insertMessage(trx, {
        conversation_id: conversationId,
        turn_id: turnId,
        role: 'tool',
        content: r.content,
        tool_calls: null,
        tool_call_id: r.callId,
        author_id: null,
      });
    }
  });
}
