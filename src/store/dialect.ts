/**
 * Which SQL dialect a kysely handle speaks. Migrations and the few repository functions that need
 * a dialect's own statement (full-text search, lease clocks) branch on it; everything else is
 * portable SQL.
 */
import { type Kysely, PostgresAdapter } from 'kysely';

/** True when the handle talks to PostgreSQL (else SQLite). */
// biome-ignore lint/suspicious/noExplicitAny: migrations pass untyped handles
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
