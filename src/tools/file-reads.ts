/**
 * The record of which files a conversation has read. `edit_file` (and `write_patch` edits) need a
 * prior read, and refuse when the file changed on disk since then, so the model never edits text
 * it has not seen.
 */
import type { Stats } from 'node:fs';
import type { Db } from '../store/db.js';
import type { FileReadsTable } from '../store/schema.js';

/** Record (or refresh) a read of `abs` by a conversation. */
export async function recordRead(
  db: Db,
  conversationId: string,
  abs: string,
  st: Pick<Stats, 'size' | 'mtimeMs'>,
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

/**
 * Why an edit of `abs` must be refused given the last read, or null when it may go ahead.
 * The hash decides when one was recorded; otherwise size and mtime do.
 */
export function staleReason(
  display: string,
  read: FileReadsTable | undefined,
  current: { size: number; mtimeMs: number; sha256: string },
): string | null {
  if (!read) return `${display}: read it with read_file first; edits need a prior read in this conversation`;
  const changed =
    read.sha256 !== null
      ? read.sha256 !== current.sha256
      : Number(read.size) !== current.size || Number(read.mtime_ms) !== Math.floor(current.mtimeMs);
  return changed ? `${display}: changed on disk since you last read it; read_file it again before editing` : null;
}
