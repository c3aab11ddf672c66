/**
 * kysely over one better-sqlite3 connection, made cheap for the engine's many small queries:
 * prepared statements are kept by SQL text, waiters for the connection are served in order, and
 * compiled queries can run at once, synchronously, when it is safe (see {@link directRunner}).
 */
import type SQLite from 'better-sqlite3';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  type UnknownRow,
} from 'kysely';
import type { Database } from './schema.js';

/**
 * kysely prepares every query anew; preparing costs as much as running a small query. The engine
 * issues the same few dozen statements over and over, so keep prepared statements by SQL text
 * (bounded, least recently used dropped first). better-sqlite3 is synchronous, so a cached
 * statement is never used by two queries at once.
 */
function withStatementCache(sqlite: SQLite.Database, max = 500): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (source: string): SQLite.Statement => {
    const hit = cache.get(source);
    if (hit) {
      cache.delete(source);
      cache.set(source, hit);
      return hit;
    }
    const stmt = sqlite.prepare(source);
    cache.set(source, stmt);
    if (cache.size > max) cache.delete(cache.keys().next().value as string);
    return stmt;
  };
  return new Proxy(sqlite, {
    get(target, prop, receiver) {
      if (prop === 'prepare') return prepare;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A first-in, first-out lock: a release wakes exactly the next waiter. */
class FifoLock {
  private held = false;
  private readonly waiters: Array<() => void> = [];

  /** Whether a query or a transaction has the connection now. */
  get busy(): boolean {
    return this.held;
  }

  acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held = false;
  }
}

/**
 * kysely's SQLite driver guards its one connection with a lock that wakes every waiter on each
 * release (they all re-check, one wins): with a hundred conversations queued that is a hundred
 * wake-ups per query. A FIFO lock in front hands the connection to one waiter at a time, in order.
 */
class FifoSqliteDriver extends SqliteDriver implements Driver {
  constructor(
    settings: SqliteDialectConfig,
    private readonly queue: FifoLock,
    private readonly onDestroy: () => void,
  ) {
    super(settings);
  }

  override async destroy(): Promise<void> {
    await super.destroy();
    this.onDestroy();
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.queue.acquire();
    return super.acquireConnection();
  }

  override async releaseConnection(): Promise<void> {
    await super.releaseConnection();
    this.queue.release();
  }
}

class FifoSqliteDialect extends SqliteDialect {
  constructor(
    private readonly settings: SqliteDialectConfig,
    private readonly queue: FifoLock,
    private readonly onDestroy: () => void,
  ) {
    super(settings);
  }

  override createDriver(): Driver {
    return new FifoSqliteDriver(this.settings, this.queue, this.onDestroy);
  }
}

/**
 * Runs an already compiled query on SQLite at once: better-sqlite3 is synchronous, so running it
 * then is what the driver would do after its lock hand-off, without the dozen promise steps of
 * kysely's executor around it (for a small query they cost more than SQLite does). On the
 * database handle that is safe only while nothing holds the connection; inside a transaction
 * always (the transaction holds it). Otherwise it refuses (`undefined`) and the caller goes
 * through kysely, waiting its turn.
 */
export interface DirectRunner {
  run<R>(query: CompiledQuery<R>): QueryResult<R> | undefined;
}

/**
 * Marks the handles of one SQLite connection, and every transaction made from them (kysely hands
 * its plugins on to transactions): it is how a transaction's query finds the connection to run
 * on. It changes nothing in queries or results.
 */
class SqliteConnectionMark implements KyselyPlugin {
  constructor(readonly inTransaction: DirectRunner) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

const directRunners = new WeakMap<Kysely<Database>, DirectRunner>();

/** The direct runner of a SQLite handle or transaction (none for PostgreSQL). */
export function directRunner(db: Kysely<Database>): DirectRunner | undefined {
  const root = directRunners.get(db);
  if (root || !db.isTransaction) return root;
  for (const plugin of db.getExecutor().plugins)
    if (plugin instanceof SqliteConnectionMark) return plugin.inTransaction;
  return undefined;
}

function runOn(sqlite: SQLite.Database) {
  return <R>(query: CompiledQuery<R>): QueryResult<R> => {
    const stmt = sqlite.prepare(query.sql);
    if (stmt.reader) return { rows: stmt.all(query.parameters) as R[] };
    const { changes, lastInsertRowid } = stmt.run(query.parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  };
}

/** The kysely handle of an open better-sqlite3 connection; `onDestroy` runs once it is closed. */
export function sqliteKysely(sqlite: SQLite.Database, onDestroy: () => void = () => {}): Kysely<Database> {
  const database = withStatementCache(sqlite);
  const queue = new FifoLock();
  const run = runOn(database);
  const db = new Kysely<Database>({
    dialect: new FifoSqliteDialect({ database }, queue, onDestroy),
    plugins: [new SqliteConnectionMark({ run })],
  });
  directRunners.set(db, { run: (query) => (queue.busy ? undefined : run(query)) });
  return db;
}
