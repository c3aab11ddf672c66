/**
 * Fills the message search index (`messages_fts`) off the hot path: new user and assistant
 * messages are indexed in batches, every second by the core's sweep and before each search, so a
 * message is findable by `recall` as soon as it is searched for. `fts_progress` records the
 * newest message indexed; a batch and its mark commit together, so two processes never index a
 * row twice (the second finds the mark moved and adds nothing).
 */
import { sql } from 'kysely';
import type { Db } from '../db.js';
import { isPostgres } from '../dialect.js';

/** Messages indexed per transaction, so one catch-up never holds the write lock for long. */
const BATCH = 2000;

/** Index messages newer than the progress mark; returns how many rows were looked at. */
export async function indexPendingMessages(db: Db, batch = BATCH): Promise<number> {
  // PostgreSQL's GIN indexes are kept by the server as rows are written: nothing to catch up.
  if (isPostgres(db)) return 0;
  let total = 0;
  for (;;) {
    const moved = await db.transaction().execute(async (trx) => {
      const mark = await trx
        .selectFrom('fts_progress')
        .select('upto')
        .where('name', '=', 'messages')
        .executeTakeFirst();
      const from = Number(mark?.upto ?? 0);
      const last = await trx
        .selectFrom('messages')
        .select('id')
        .where('id', '>', from)
        .orderBy('id')
        .limit(1)
        .offset(batch - 1)
        .executeTakeFirst();
      const newest = await trx
        .selectFrom('messages')
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirst();
      const upto = last ? last.id : Number(newest?.id ?? from);
      if (upto <= from) return 0;
      // The mark moves first: it is this transaction's write lock, taken before reading the rows.
      await trx
        .updateTable('fts_progress')
        .set({ upto })
        .where('name', '=', 'messages')
        .where('upto', '=', from)
        .execute();
      await sql`INSERT INTO messages_fts(rowid, content)
        SELECT id, content FROM messages
        WHERE id > ${from} AND id <= ${upto} AND role IN ('user', 'assistant') AND content IS NOT NULL`.execute(trx);
      return upto - from;
    });
    total += moved;
    if (moved < batch) return total;
  }
}
