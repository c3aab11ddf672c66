/**
 * Which database a test uses. By default a SQLite file in the test's temp folder. With
 * `SWITCHBOARD_TEST_DATABASE_URL=postgres://…` (set by `.ci/run`) every test database is a fresh,
 * empty PostgreSQL schema instead (in a database of its own per test file, made on that server),
 * so the same tests run against both stores.
 *
 * Schemas are made ahead, a batch per test file before it runs (`test/setup/per-file.ts`,
 * a vitest setup file: it runs before every file even where the files of a worker share their
 * modules, as `isolate: false` makes them), so `testDatabaseUrl` stays synchronous (configs are
 * built synchronously); the same key (a temp folder, maybe with a name) always maps to the same
 * schema, so a restarted "process" sees its data again. The file's database is dropped after its
 * tests (forcibly: a child process a test left running may still hold a connection).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { databaseTarget } from '../../src/config.js';
import { type Db, openDatabase } from '../../src/store/db.js';

/** The PostgreSQL server the suite runs against, or undefined (SQLite). */
export const testPostgresUrl: string | undefined = process.env.SWITCHBOARD_TEST_DATABASE_URL || undefined;

const BATCH = 120;

/** The test file's database and the schemas not yet handed out (reset by {@link beginFileDatabase}). */
let fileDatabaseUrl: string | undefined;
let schemas: string[] = [];
let assigned = new Map<string, string>();

/**
 * Make the database of the test file about to run (its own, so catalog look-ups — kysely's — see
 * only its schemas) with a batch of empty schemas, forgetting the previous file's; returns the
 * drop to run after the file. Called by the setup file, only when the suite runs on PostgreSQL.
 */
export async function beginFileDatabase(serverUrl: string): Promise<() => Promise<void>> {
  const name = `t_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const names = Array.from({ length: BATCH }, (_, i) => `s${i}`);
  try {
    await client.query(names.map((n) => `CREATE SCHEMA ${n};`).join('\n'));
  } finally {
    await client.end();
  }
  fileDatabaseUrl = url;
  schemas = names;
  assigned = new Map();
  return async () => {
    const dropper = new pg.Client({ connectionString: serverUrl });
    await dropper.connect();
    try {
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await dropper.end();
    }
  };
}

/** `DATABASE_URL` of a PostgreSQL URL whose unqualified tables live in `schema`. */
function withSchema(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

/**
 * The database URL for a test keyed by `dir` (and `name` when one folder holds several databases):
 * `sqlite:DIR/NAME.db`, or a fresh PostgreSQL schema when the suite runs against PostgreSQL.
 */
export function testDatabaseUrl(dir: string, name = 'switchboard'): string {
  const file = path.join(dir, `${name}.db`);
  if (!testPostgresUrl) return `sqlite:${file}`;
  let schema = assigned.get(file);
  if (!schema) {
    schema = schemas.shift();
    if (!fileDatabaseUrl) throw new Error('test-db: no database for this file (test/setup/per-file.ts did not run)');
    if (!schema) throw new Error(`test-db: more than ${BATCH} databases in one test file; raise BATCH`);
    assigned.set(file, schema);
  }
  return withSchema(fileDatabaseUrl as string, schema);
}

/** Open the test database of `dir` (see {@link testDatabaseUrl}). */
export function openTestDatabase(dir: string, name?: string): Db {
  return openDatabase(databaseTarget(testDatabaseUrl(dir, name)), { poolSize: 4 });
}

/**
 * The reason to skip a suite that tests SQLite itself (its query plans, its file locking) when
 * the suite runs against PostgreSQL, else undefined. Use with `skipped()` from ./skips.js.
 */
export function sqliteOnly(why: string): string | undefined {
  return testPostgresUrl === undefined ? undefined : `SQLite only, this half runs against PostgreSQL: ${why}`;
}

/**
 * The reason to skip a suite that needs a PostgreSQL server (several instances over one
 * database) when none is set, else undefined. `.ci/run` sets one for its second half.
 */
export function postgresOnly(why: string): string | undefined {
  return testPostgresUrl === undefined
    ? `PostgreSQL only, SWITCHBOARD_TEST_DATABASE_URL is not set: ${why}`
    : undefined;
}
