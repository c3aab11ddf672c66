/** `known_tools`: every tool this switchboard has offered, with when it was first and last seen. */
import type { Db } from '../db.js';

/** A tool as recorded. */
export interface KnownTool {
  name: string;
  source: string;
  description: string;
}

/** Record a catalog (first seen kept, last seen and description refreshed) in one commit. */
export async function recordKnownTools(db: Db, tools: Iterable<KnownTool>): Promise<void> {
  const now = Date.now();
  await db.transaction().execute(async (trx) => {
    for (const t of tools) {
      await trx
        .insertInto('known_tools')
        .values({ name: t.name, source: t.source, description: t.description, first_seen: now, last_seen: now })
        .onConflict((oc) =>
          oc.column('name').doUpdateSet({ last_seen: now, description: t.description, source: t.source }),
        )
        .execute();
    }
  });
}
