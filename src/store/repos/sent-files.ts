/**
 * Sent files: the copies taken when a tool sends a file, stored in chunks (`sent_files`,
 * `sent_file_chunks`). A copy is written chunk by chunk outside a transaction (a 50 MB file must
 * not hold SQLite's write lock while it is read) and marked complete at the end; readers only see
 * complete copies. See `src/delivery/sent-files.ts` for why they exist.
 */
import type { Db } from '../db.js';
import type { SentFile } from '../schema.js';

/** Largest chunk stored in one row. */
export const SENT_CHUNK_BYTES = 1024 * 1024;

/** Start a copy (incomplete until {@link finishSentFile}). */
export async function startSentFile(db: Db, id: string, name: string): Promise<void> {
  await db.insertInto('sent_files').values({ id, name, size: 0, complete: 0, created_at: Date.now() }).execute();
}

/** Store chunk `seq` (0-based) of a copy. */
export async function addSentChunk(db: Db, id: string, seq: number, data: Buffer): Promise<void> {
  await db.insertInto('sent_file_chunks').values({ file_id: id, seq, data }).execute();
}

/** Mark a copy complete with its size. */
export async function finishSentFile(db: Db, id: string, size: number): Promise<void> {
  await db.updateTable('sent_files').set({ size, complete: 1 }).where('id', '=', id).execute();
}

/** A complete copy's row, or undefined. */
export async function sentFile(db: Db, id: string): Promise<SentFile | undefined> {
  return db.selectFrom('sent_files').selectAll().where('id', '=', id).where('complete', '=', 1).executeTakeFirst();
}

/** Chunk `seq` of a copy, or undefined past the last one. */
export async function sentChunk(db: Db, id: string, seq: number): Promise<Buffer | undefined> {
  const row = await db
    .selectFrom('sent_file_chunks')
    .select('data')
    .where('file_id', '=', id)
    .where('seq', '=', seq)
    .executeTakeFirst();
  return row ? Buffer.from(row.data) : undefined;
}

/** Keep a copy while the delivery `key` is open. */
export async function holdForDelivery(db: Db, id: string, key: string): Promise<void> {
  await db.updateTable('sent_files').set({ delivery_key: key }).where('id', '=', id).execute();
}

/** Keep a copy while the web chat message `ref` offers it. */
export async function holdForWebMessage(db: Db, id: string, ref: string): Promise<void> {
  await db.updateTable('sent_files').set({ web_ref: ref }).where('id', '=', id).execute();
}

/** Remove copies; chunks first, so a half-removed copy is never read as complete. */
export async function deleteSentFiles(db: Db, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('sent_file_chunks').where('file_id', 'in', ids).execute();
  await db.deleteFrom('sent_files').where('id', 'in', ids).execute();
}

/**
 * Remove the copies created before `before` that nothing holds any more: never completed (a copy
 * cut off by a crash), or neither an open delivery nor a live web chat message refers to them.
 * @returns how many were removed.
 */
export async function pruneSentFiles(db: Db, before: number, batch = 100): Promise<number> {
  let removed = 0;
  for (;;) {
    const rows = await db
      .selectFrom('sent_files as f')
      .select('f.id')
      .where('f.created_at', '<', before)
      .where((eb) =>
        eb.or([
          eb('f.complete', '=', 0),
          eb.and([
            eb.or([
              eb('f.delivery_key', 'is', null),
              eb.not(
                eb.exists(
                  eb
                    .selectFrom('deliveries as d')
                    .select('d.id')
                    .whereRef('d.idem_key', '=', 'f.delivery_key')
                    .where('d.status', 'not in', ['delivered', 'failed', 'abandoned']),
                ),
              ),
            ]),
            eb.or([
              eb('f.web_ref', 'is', null),
              eb.not(
                eb.exists(
                  eb
                    .selectFrom('web_messages as w')
                    .select('w.id')
                    .whereRef('w.ref', '=', 'f.web_ref')
                    .where('w.deleted', '=', 0),
                ),
              ),
            ]),
          ]),
        ]),
      )
      .limit(batch)
      .execute();
    await deleteSentFiles(
      db,
      rows.map((r) => r.id),
    );
    removed += rows.length;
    if (rows.length < batch) return removed;
  }
}
