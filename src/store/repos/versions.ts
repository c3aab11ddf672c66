/**
 * Change counters (`store_versions`) of the state processes keep in memory. A write of such state
 * bumps its counter in the same transaction as the write ({@link withBump}), so a reader that sees
 * the old counter cannot have missed a committed write.
 */
import { sql } from 'kysely';
import type { Db } from '../db.js';
import { prepared } from '../prepared.js';

/** Kinds of state with a change counter. */
export type VersionedState = 'rules' | 'memories' | 'conversations' | 'grants' | 'summaries' | 'memos';

const versionsQuery = prepared((db: Db) => db.selectFrom('store_versions').select(['name', 'version']));

let localWriteCount = 0;

/**
 * How many versioned writes this process has made (any database): a cache that saw a different
 * count re-reads the counters before answering, so this process reads its own writes at once.
 */
export function localWrites(): number {
  return localWriteCount;
}

/** Every counter (a kind never written has none: read it as 0). */
export async function readVersions(db: Db): Promise<Map<string, number>> {
  const rows = await versionsQuery(db);
  return new Map(rows.map((r) => [r.name, Number(r.version)]));
}

/** Bump one counter (call inside the transaction of the write it announces). */
export async function bumpVersion(db: Db, state: VersionedState): Promise<void> {
  await db
    .insertInto('store_versions')
    .values({ name: state, version: 1 })
    .onConflict((oc) => oc.column('name').doUpdateSet({ version: sql<number>`store_versions.version + 1` }))
    .execute();
}

/**
 * Run a write and bump `state`'s counter in one transaction: the caller's when `db` is one
 * already, a new one otherwise. The counter is bumped only when `changed` says the write changed
 * something (default: always).
 */
export async function withBump<T>(
  db: Db,
  state: VersionedState,
  write: (trx: Db) => Promise<T>,
  changed: (result: T) => boolean = () => true,
): Promise<T> {
  let bumped = false;
  const run = async (trx: Db) => {
    const result = await write(trx);
    bumped = changed(result);
    if (bumped) await bumpVersion(trx, state);
    return result;
  };
  if (db.isTransaction) {
    // The caller commits later; counting now makes the next cached read check the counters (on
    // SQLite that check waits for the commit, since the transaction holds the one connection).
    const result = await run(db);
    if (bumped) localWriteCount++;
    return result;
  }
  const result = await db.transaction().execute(run);
  if (bumped) localWriteCount++;
  return result;
}
