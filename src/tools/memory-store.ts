/**
 * Saved memories. Full-text recall lives in the store (`src/store/repos/search.ts`, one function
 * for SQLite FTS5 and PostgreSQL tsvector) and is re-exported here for the memory tools.
 */
import type { Db } from '../store/db.js';
import type { Memory } from '../store/repos/search.js';

export { ftsQuery, type HistoryHit, type Memory, searchHistory, searchMemories, textQuery } from '../store/repos/search.js';

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

