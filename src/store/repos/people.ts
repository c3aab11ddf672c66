/** `people`: the display name each principal last came with (the core's name directory, `core/names.ts`). */
import type { Db } from '../db.js';

/** Record `name` as the display name of `principal` (a later name replaces an earlier one). */
export async function recordPersonName(db: Db, principal: string, name: string): Promise<void> {
  const now = Date.now();
  await db
    .insertInto('people')
    .values({ principal, name, seen_at: now })
    .onConflict((oc) => oc.column('principal').doUpdateSet({ name, seen_at: now }))
    .execute();
}

/** The recorded display name of `principal`, if any. */
export async function personName(db: Db, principal: string): Promise<string | undefined> {
  const row = await db.selectFrom('people').select('name').where('principal', '=', principal).executeTakeFirst();
  return row?.name;
}

/** The `limit` most recently recorded people, most recent first. */
export async function recentPeople(db: Db, limit: number): Promise<Array<{ principal: string; name: string }>> {
  return db.selectFrom('people').select(['principal', 'name']).orderBy('seen_at', 'desc').limit(limit).execute();
}
