/**
 * Full-text search over saved memories and the conversation log, one function per search for
 * both dialects: SQLite answers from its FTS5 tables (kept by triggers), PostgreSQL from GIN
 * indexes over `to_tsvector('english', …)` (both stem English words the same way: porter).
 * User text never reaches a query language: it is split into words here, and each word is
 * quoted (FTS5) or passed as a bound parameter to `plainto_tsquery` (PostgreSQL).
 */
import { sql } from 'kysely';
import type { Db } from '../db.js';
import { isPostgres } from '../dialect.js';
import { indexPendingMessages } from './search-index.js';

/** Words to search for and whether a hit needs all of them or any. */
export interface TextQuery {
  terms: string[];
  mode: 'all' | 'any';
}

/**
 * The searchable words of a text: whitespace-separated terms with at least one letter or digit
 * (the tokenizers drop the rest anyway), at most 32. Null when nothing searchable remains.
 */
export function textQuery(text: string, mode: 'all' | 'any' = 'all'): TextQuery | null {
  const terms = text
    .split(/\s+/)
    .filter((t) => /[\p{L}\p{N}]/u.test(t))
    .slice(0, 32);
  return terms.length ? { terms, mode } : null;
}

/** A safe FTS5 query: each term double-quoted (inner quotes doubled), so nothing is an operator. */
export function ftsQuery(text: string, mode: 'all' | 'any' = 'all'): string | null {
  const q = textQuery(text, mode);
  return q ? fts5Match(q) : null;
}

function fts5Match(q: TextQuery): string {
  return q.terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(q.mode === 'all' ? ' ' : ' OR ');
}

/** `plainto_tsquery` per word, joined with `&&` (all) or `||` (any); words are parameters. */
function tsQuery(q: TextQuery) {
  const parts = q.terms.map((t) => sql`plainto_tsquery('english', ${t})`);
  return sql.join(parts, sql.raw(q.mode === 'all' ? ' && ' : ' || '));
}

/** A saved memory. */
export interface Memory {
  /** Whose it is: a principal, or `''` for the shared memory. */
  owner: string;
  key: string;
  value: string;
  updated_at: number;
}

/** Memories of the given owners (a person, and `''` for the shared memory) matching a query, best first. */
export async function searchMemories(
  db: Db,
  q: TextQuery,
  limit: number,
  owners: readonly string[],
): Promise<Memory[]> {
  if (owners.length === 0) return [];
  const among = sql.join(owners.map((o) => sql`${o}`));
  if (isPostgres(db)) {
    const r = await sql<Memory>`
      SELECT m.owner, m.key, m.value, m.updated_at,
             ts_rank(to_tsvector('english', m.key || ' ' || m.value), q.q) AS rank
      FROM memories m, (SELECT ${tsQuery(q)} AS q) q
      WHERE to_tsvector('english', m.key || ' ' || m.value) @@ q.q AND m.owner IN (${among})
      ORDER BY rank DESC, m.id LIMIT ${limit}`.execute(db);
    return r.rows.map(({ owner, key, value, updated_at }) => ({ owner, key, value, updated_at }));
  }
  const r = await sql<Memory>`
    SELECT m.owner, m.key, m.value, m.updated_at FROM memories_fts
    JOIN memories m ON m.id = memories_fts.rowid
    WHERE memories_fts MATCH ${fts5Match(q)} AND m.owner IN (${among})
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
 * thread, e.g. before a `/new`) matching a query, best first. Other chats are never searched;
 * only user and assistant text is indexed (tool results are bulky, mostly file contents).
 */
export async function searchHistory(
  db: Db,
  conversationId: string,
  q: TextQuery,
  limit: number,
): Promise<HistoryHit[]> {
  if (isPostgres(db)) {
    const r = await sql<HistoryHit & { rank: number }>`
      SELECT m.id, m.role, m.created_at,
             ts_headline('english', m.content, q.q, 'StartSel=[, StopSel=], MaxWords=16, MinWords=6, MaxFragments=1, FragmentDelimiter=…') AS snippet,
             ts_rank(to_tsvector('english', m.content), q.q) AS rank
      FROM messages m
      JOIN conversations c ON c.id = m.conversation_id
      JOIN conversations here ON here.id = ${conversationId},
      (SELECT ${tsQuery(q)} AS q) q
      WHERE m.role IN ('user', 'assistant') AND m.content IS NOT NULL
        AND to_tsvector('english', m.content) @@ q.q
        AND c.channel = here.channel AND c.chat_key = here.chat_key AND c.thread_key = here.thread_key
      ORDER BY rank DESC, m.id LIMIT ${limit}`.execute(db);
    return r.rows.map(({ id, role, created_at, snippet }) => ({ id, role, created_at, snippet }));
  }
  // SQLite's index is filled in batches off the hot path; the newest messages join it now.
  await indexPendingMessages(db);
  const r = await sql<HistoryHit>`
    SELECT m.id, m.role, m.created_at,
           snippet(messages_fts, 0, '[', ']', '…', 16) AS snippet
    FROM messages_fts
    JOIN messages m ON m.id = messages_fts.rowid
    JOIN conversations c ON c.id = m.conversation_id
    JOIN conversations here ON here.id = ${conversationId}
    WHERE messages_fts MATCH ${fts5Match(q)}
      AND c.channel = here.channel AND c.chat_key = here.chat_key AND c.thread_key = here.thread_key
    ORDER BY bm25(messages_fts) LIMIT ${limit}`.execute(db);
  return r.rows;
}
