/**
 * Opening the database and migrating it. SQLite (better-sqlite3) by default, in WAL mode so
 * other commands (`pair`, `doctor`) can run beside `start` on the same file; PostgreSQL (`pg`
 * pool) when the URL says `postgres://`, so several instances can share one database.
 */
import { mkdirSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import SQLite from 'better-sqlite3';
import {
  DEFAULT_MIGRATION_TABLE,
  Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  PostgresDialect,
  sql,
} from 'kysely';
import type pg from 'pg';
import { type DatabaseTarget, databaseTarget } from '../config.js';
import { SwitchboardError } from '../errors.js';
import { isPostgres } from './dialect.js';
import type { Database } from './schema.js';
import { checkpointOffThread } from './checkpointer.js';
import { sqliteKysely } from './sqlite-kysely.js';

export { directRunner, type DirectRunner } from './sqlite-kysely.js';

/** Raised when the database cannot be opened or a migration fails. */
export class StoreError extends SwitchboardError {}

/** Folder of the frozen migrations (repository root `migrations/`). */
export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

/** The typed database handle used everywhere. */
export type Db = Kysely<Database>;

/**
 * Open a SQLite database file (created with its folder when missing).
 * Pragmas: WAL, busy_timeout 5 s (a second process waits instead of failing), foreign keys on;
 * WAL checkpoints on a worker thread (see `checkpointer.ts`).
 */
export function openSqlite(file: string, options: Pick<OpenOptions, 'groupCommit'> = {}): Db {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  let sqlite: SQLite.Database;
  try {
    sqlite = new SQLite(file);
  } catch (err) {
    throw new StoreError('store_open_failed', `cannot open database ${file}: ${(err as Error).message}`, err);
  }
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('synchronous = NORMAL');
  if (file === ':memory:') return sqliteKysely(sqlite);
  return sqliteKysely(sqlite, checkpointOffThread(sqlite, path.resolve(file)), options.groupCommit);
}

/** Options of {@link openDatabase}. */
export interface OpenOptions {
  /** Most connections the PostgreSQL pool opens (ignored for SQLite). */
  poolSize?: number;
  /**
   * SQLite: commit the writes of one turn of the event loop together (`group-commit.ts`). Only
   * for the one connection a process has to the file (`switchboard start`).
   */
  groupCommit?: boolean;
}

// 64-bit integers (epoch milliseconds, counts) and numeric sums come back from `pg` as strings;
// every value this schema stores fits a double exactly, so parse them as numbers, per pool.
const PG_INT8 = 20;
const PG_NUMERIC = 1700;
function pgTypes(types: typeof pg.types): pg.CustomTypesConfig {
  return {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === PG_INT8 || oid === PG_NUMERIC) return (value: string) => Number(value);
      return types.getTypeParser(oid, format as 'text');
    },
  } as unknown as pg.CustomTypesConfig;
}

/**
 * Open a PostgreSQL database through a `pg` pool of at most `poolSize` connections.
 * Nothing connects until the first query; a wrong URL fails there (with the server's reason).
 * `pg` itself is loaded then too, so a SQLite deployment never pays for loading it.
 */
export function openPostgres(url: string, options: OpenOptions = {}): Db {
  const pool = async () => {
    const { default: driver } = await import('pg');
    const p = new driver.Pool({ connectionString: url, max: options.poolSize ?? 10, types: pgTypes(driver.types) });
    // An idle client losing its connection (server restart) must not crash the process; the pool
    // drops it and the next query opens a new one.
    p.on('error', () => {});
    return p;
  };
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/** Open the database a `DATABASE_URL` names: `postgres://…` or a SQLite path. */
export function openDatabase(target: DatabaseTarget, options: OpenOptions = {}): Db {
  return target.kind === 'postgres' ? openPostgres(target.url, options) : openSqlite(target.file, options);
}

/** Open the database of the `[store]` settings (`database_url`, `pool_size`). */
export function openStore(
  store: { database_url: string; pool_size: number },
  options: Pick<OpenOptions, 'groupCommit'> = {},
): Db {
  return openDatabase(databaseTarget(store.database_url), { ...options, poolSize: store.pool_size });
}

/** A short name of where the database is, without a password: for logs and `doctor`. */
export function describeStore(url: string): string {
  const target = databaseTarget(url);
  if (target.kind === 'sqlite') return target.file;
  const u = new URL(target.url);
  return `postgres://${u.host}${u.pathname}`;
}

/**
 * Loads migration files from a folder. The import happens here, in project code, so the same
 * TypeScript loader that runs the app (tsx, or vitest in tests) compiles the migrations too —
 * kysely's own FileMigrationProvider imports from node_modules, where no loader applies.
 */
export class FolderMigrationProvider implements MigrationProvider {
  constructor(private readonly folder: string) {}

  /** The migration files of the folder, sorted by name. */
  async files(): Promise<string[]> {
    return (await fs.readdir(this.folder)).filter((f) => /\.(ts|js|mjs|mts)$/.test(f) && !f.endsWith('.d.ts')).sort();
  }

  async getMigrations(): Promise<Record<string, Migration>> {
    const migrations: Record<string, Migration> = {};
    const files = await this.files();
    for (const file of files) {
      const mod = (await import(pathToFileURL(path.join(this.folder, file)).href)) as Partial<Migration>;
      if (typeof mod.up !== 'function') throw new StoreError('migration_invalid', `migration ${file} exports no up()`);
      migrations[migrationName(file)] = mod as Migration;
    }
    return migrations;
  }
}

/** A migration's name: its file name without the extension. */
function migrationName(file: string): string {
  return file.replace(/\.[^.]+$/, '');
}

/**
 * True when the database has run exactly the migrations of the folder, read with one query and
 * without importing any migration. Anything else (a migration missing, one the folder lacks, no
 * migration table yet, an error) is false: the Migrator then applies, or reports, what differs.
 */
async function isUpToDate(db: Db, provider: FolderMigrationProvider, schema: string | undefined): Promise<boolean> {
  try {
    const table = sql.table(schema ? `${schema}.${DEFAULT_MIGRATION_TABLE}` : DEFAULT_MIGRATION_TABLE);
    const [files, rows] = await Promise.all([
      provider.files(),
      sql<{ name: string }>`SELECT name FROM ${table}`.execute(db),
    ]);
    const executed = new Set(rows.rows.map((r) => r.name));
    return executed.size === files.length && files.every((f) => executed.has(migrationName(f)));
  } catch {
    return false;
  }
}

/** The names of the migrations in the folder, in the order `migrate` applies them. */
export async function migrationNames(folder = MIGRATIONS_DIR): Promise<string[]> {
  return (await new FolderMigrationProvider(folder).files()).map(migrationName);
}

/**
 * The migrations of the folder this database has not run yet, in the order `migrate` applies
 * them, without applying any (`doctor` reports them). A database without a migration table has
 * run none.
 */
export async function pendingMigrations(db: Db, folder = MIGRATIONS_DIR): Promise<string[]> {
  const schema = isPostgres(db)
    ? (await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)).rows[0]?.schema
    : undefined;
  const names = await migrationNames(folder);
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((t) => t.name === DEFAULT_MIGRATION_TABLE && (schema === undefined || t.schema === schema)))
    return names;
  const table = sql.table(schema ? `${schema}.${DEFAULT_MIGRATION_TABLE}` : DEFAULT_MIGRATION_TABLE);
  const rows = await sql<{ name: string }>`SELECT name FROM ${table}`.execute(db);
  const executed = new Set(rows.rows.map((r) => r.name));
  return names.filter((n) => !executed.has(n));
}

/**
 * Apply every pending migration. A database already at the latest migration (every start but
 * the first) is recognised from the migration table and the folder listing alone.
 * @throws StoreError naming the failed migration; start-up must stop on it.
 */
export async function migrateToLatest(db: Db, folder = MIGRATIONS_DIR): Promise<string[]> {
  // PostgreSQL: kysely looks for its own tables across every schema; pin them to the schema the
  // connection works in, or another schema's `kysely_migration` (a second application, a test)
  // would be taken for ours. Two instances starting at once are serialised by kysely's lock
  // (`pg_advisory_xact_lock` inside the migration transaction), so migrations apply once.
  const migrationTableSchema = isPostgres(db)
    ? (await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)).rows[0]?.schema
    : undefined;
  const provider = new FolderMigrationProvider(folder);
  if (await isUpToDate(db, provider, migrationTableSchema)) return [];
  const migrator = new Migrator({
    db,
    provider,
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
    // Features land in parallel with their own dated migrations, so a database may have run a
    // later-named one (e.g. rule-scope) before an earlier-named one arrives (deliveries). Each
    // migration touches its own tables; missing ones are applied, in name order, after the rest.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const name = failed?.migrationName ?? 'unknown';
    const msg = error instanceof Error ? error.message : String(error ?? 'failed');
    throw new StoreError('migration_failed', `migration ${name} failed: ${msg}`, error);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
