/** Which files a conversation has read (`file_reads`): the edit tools' proof of a prior read. */
import type { Db } from '../db.js';
import type { FileReadsTable } from '../schema.js';

/** Record (or refresh) a read of `abs` by a conversation. */
export async function recordRead(
  db: Db,
  conversationId: string,
  abs: string,
  st: { size: number; mtimeMs: number },
  hash: string | null,
): Promise<void> {
  const row = {
    conversation_id: conversationId,
    path: abs,
    sha256: hash,
    size: st.size,
    mtime_ms: Math.floor(st.mtimeMs),
    read_at: Date.now(),
  };
  await db
    .insertInto('file_reads')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['conversation_id', 'path']).doUpdateSet({
        sha256: row.sha256,
        size: row.size,
        mtime_ms: row.mtime_ms,
        read_at: row.read_at,
      }),
    )
    .execute();
}

/** The last recorded read of `abs` in a conversation, if any. */
export async function lastRead(db: Db, conversationId: string, abs: string): Promise<FileReadsTable | undefined> {
  return db
    .selectFrom('file_reads')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('path', '=', abs)
    .executeTakeFirst();
}
