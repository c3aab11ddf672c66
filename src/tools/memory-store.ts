/**
 * Saved memories and full-text recall (SQLite FTS5). User text never reaches FTS5 syntax: every
 * term is wrapped in double quotes (inner quotes doubled), so `"`, `*`, `NEAR`, `(`, `-`, `:` and
 * `AND`/`OR` are searched as words, never parsed as operators.
 */
import { sql } from 'kysely';
import { indexPendingMessages } from '../store/repos/search-index.js';
import type { Db } from '../store/db.js';

/** A saved memory. */
export interface Memory {
  key: string;
  value: string;
  updated_at: number;
}

/**
 * Build a safe FTS5 query: each whitespace-separated term quoted; terms with no letters or digits
 * (which the tokenizer would drop anyway) left out. Null when nothing searchable remains.
 */
export function ftsQuery(text: string, mode: 'all' | 'any' = 'all'): string | null {
  const terms = text
    .split(/\s+/)
    .filter((t) => /[\p{L}\p{N}]/u.test(t))
    .slice(0, 32)
    .map((t) => `"${t.replace(/"/g, '""')}"`);
  if (terms.length === 0) return null;
  return terms.join(mode === 'all' ? ' ' : ' OR ');
}

/** Save (or overwrite) a memory. Returns true when the key already existed. */
export async function saveMemory(db: Db, key: string, value: string, by: string | null): Promise<boolean> {
  const now = Date.now();
  const existed = await db.selectFrom('memories').select('id').where('key', '=', key).executeTakeFirst();
  await db
    .insertInto('memories')
    .values({ key, value, created_by: by, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: now }))
    .execute();
  return existed !== undefined;
}

/** Delete a memory; false when there was none. */
export async function deleteMemory(db: Db, key: string): Promise<boolean> {
  const r = await db.deleteFrom('memories').where('key', '=', key).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Memories, most recently updated first. */
export async function listMemories(db: Db, limit: number): Promise<Memory[]> {
  return db.selectFrom('memories').select(['key', 'value', 'updated_at']).orderBy('updated_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** Memories matching a query, best first. */
export async function searchMemories(db: Db, query: string, limit: number): Promise<Memory[]> {
  const r = await sql<Memory>`
    SELECT m.key, m.value, m.updated_at FROM memories_fts
    JOIN memories m ON m.id = memories_fts.rowid
    WHERE memories_fts MATCH ${query}
    ORDER BY bm25(memories_fts) LIMIT ${limit}`.execute(db);
  return r.rows;
}

/** A message found in the conversation history. */
export interface HistoryHit {
  id: number;
  role: string;
  created_at: number;
  snippet: string;
}

/**
 * Messages of the same chat (this conversation and earlier ones of the same channel chat and
 * thread, e.g. before a `/new`) matching a query, best first. Other chats are never searched.
 */
export async function searchHistory(db: Db, conversationId: string, query: string, limit: number): Promise<HistoryHit[]> {
  // Messages are indexed in batches off the hot path; the newest ones join the index now.
  await indexPendingMessages(db);
  const r = await sql<HistoryHit>`
    SELECT m.id, m.role, m.created_at,
           snippet(messages_fts, 0, '[', ']', '…', 16) AS snippet
    FROM messages_fts
    JOIN messages m ON m.id = messages_fts.rowid
    JOIN conversations c ON c.id = m.conversation_id
    JOIN conversations here ON here.id = ${conversationId}
    WHERE messages_fts MATCH ${query}
      AND c.channel = here.channel AND c.chat_key = here.chat_key AND c.thread_key = here.thread_key
    ORDER BY bm25(messages_fts) LIMIT ${limit}`.execute(db);
  return r.rows;
}
