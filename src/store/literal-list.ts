/**
 * Constant value lists written into a query's SQL instead of bound as parameters. For
 * `status IN (…)` of fixed statuses that matters to SQLite: a list of parameters is built into an
 * ephemeral table at every run (about ten microseconds, more than the look-up itself), and only a
 * literal list lets the planner use a partial index whose condition names those statuses.
 */
import { type RawBuilder, sql } from 'kysely';

/** `values` as SQL literals, for `.where(column, 'in', literalList([...]))`. Only for constants. */
export function literalList<T extends string>(values: readonly T[]): Array<RawBuilder<T>> {
  return values.map((v) => sql.lit(v));
}
