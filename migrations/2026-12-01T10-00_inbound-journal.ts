/**
 * `inbound_journal`: platform updates fetched but not yet handled, one row each (until now one
 * JSON array in `settings`, rewritten whole on every change: under load that rewrote every
 * in-flight update for each one handled). Rows left by the old form are moved over.
 * Frozen: never edit after release; add a new migration instead.
 */
import type { Kysely } from 'kysely';

const LEGACY_SETTING = 'telegram.update_journal';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('inbound_journal')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('update_id', 'bigint', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('inbound_journal_pk', ['source', 'update_id'])
    .execute();
  const legacy = await db.selectFrom('settings').select('value').where('key', '=', LEGACY_SETTING).executeTakeFirst();
  if (legacy) {
    let updates: Array<{ update_id?: unknown }> = [];
    try {
      const parsed: unknown = JSON.parse(legacy.value as string);
      if (Array.isArray(parsed)) updates = parsed;
    } catch {
      // An unreadable journal was already ignored at start (logged there); nothing to move.
    }
    const now = Date.now();
    for (const u of updates) {
      if (typeof u?.update_id !== 'number') continue;
      await db
        .insertInto('inbound_journal')
        .values({ source: 'telegram', update_id: u.update_id, payload: JSON.stringify(u), created_at: now })
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    await db.deleteFrom('settings').where('key', '=', LEGACY_SETTING).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('inbound_journal').execute();
}
