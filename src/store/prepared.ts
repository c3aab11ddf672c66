/**
 * Queries the hot path runs for every message, built and compiled by kysely once per dialect
 * instead of on every call (building and compiling costs more JavaScript than SQLite spends
 * running such a query). The query is built with a placeholder for each argument; at each call
 * the placeholders' parameters are replaced by the arguments, and the compiled SQL is executed
 * as it is (on SQLite through the statement cache of `db.ts`, and at once when the connection is
 * free: see {@link directRunner}).
 */
import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
import { type Db, directRunner } from './db.js';
import { isPostgres } from './dialect.js';

const PLACEHOLDER = /^\u0000switchboard-argument-(\d+)\u0000$/;

/** The placeholder of argument `i` (a string no caller ever passes). */
function placeholder(i: number): string {
  return `\u0000switchboard-argument-${i}\u0000`;
}

/**
 * A query compiled once per dialect. `build` receives a placeholder for each of its arguments
 * (typed as the arguments; they may only be used as values, never inspected) and returns the
 * query; the result runs it with real arguments and resolves with its rows.
 */
export function prepared<A extends unknown[], R>(
  build: (db: Db, ...args: A) => Compilable<R>,
): (db: Db, ...args: A) => Promise<R[]> {
  const run = preparedWrite(build);
  return async (db, ...args) => (await run(db, ...args)).rows;
}

/** {@link prepared} for a write: resolves with the whole result (rows and affected row count). */
export function preparedWrite<A extends unknown[], R>(
  build: (db: Db, ...args: A) => Compilable<R>,
): (db: Db, ...args: A) => Promise<QueryResult<R>> {
  // Every parameter of `build` after the database is an argument (none may have a default).
  const arity = build.length - 1;
  const compiled = new Map<boolean, { query: CompiledQuery<R>; slots: Array<number | null> }>();
  return async (db, ...args) => {
    const dialect = isPostgres(db);
    let entry = compiled.get(dialect);
    if (!entry) {
      const query = build(db, ...(Array.from({ length: arity }, (_, i) => placeholder(i)) as A)).compile();
      const slots = query.parameters.map((p) => {
        const m = typeof p === 'string' ? PLACEHOLDER.exec(p) : null;
        return m ? Number(m[1]) : null;
      });
      entry = { query, slots };
      compiled.set(dialect, entry);
    }
    const { query, slots } = entry;
    const parameters = slots.map((slot, i) => (slot === null ? query.parameters[i] : args[slot]));
    const call = { ...query, parameters };
    return directRunner(db)?.run(call) ?? db.executeQuery<R>(call);
  };
}
