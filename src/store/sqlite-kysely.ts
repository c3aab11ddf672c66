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
  type UnknownRow,
} from 'kysely';
import { type Commits, GroupCommit, PlainCommit } from './group-commit.js';
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

/** Runs a prepared statement as kysely's SQLite connection would. */
function runStatement<R>(stmt: SQLite.Statement, parameters: readonly unknown[]): QueryResult<R> {
  if (stmt.reader) return { rows: stmt.all(parameters) as R[] };
  const { changes, lastInsertRowid } = stmt.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/**
 * The one connection: a write made outside a transaction joins the open group (see
 * `group-commit.ts`); the holder of the connection learns its commit in {@link pendingCommit}.
 */
class GroupedConnection implements DatabaseConnection {
  /** The commit the current holder's writes wait for, awaited once the connection is released. */
  pendingCommit: Promise<void> | null = null;

  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly groups: Commits,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const stmt = this.sqlite.prepare(query.sql);
    if (stmt.readonly || this.groups.transactionOpen) return runStatement<R>(stmt, query.parameters);
    const { result, committed } = this.groups.write(() => runStatement<R>(stmt, query.parameters));
    if (committed) this.pendingCommit = committed;
    return result;
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const stmt = this.sqlite.prepare(query.sql);
    if (!stmt.reader) throw new Error('only a query that returns rows can be streamed');
    for (const row of stmt.iterate(query.parameters)) yield { rows: [row as R] };
  }
}

/** A savepoint's name as an SQL identifier. */
function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * kysely's SQLite driver, with two changes: waiters for the connection are served in order (its
 * own lock wakes every waiter on each release: with a hundred conversations queued, a hundred
 * wake-ups per query), and writes are committed in groups. A transaction is a savepoint of the
 * open group; its writer, like one outside a transaction, waits for the group's commit after
 * releasing the connection, so the writes that come meanwhile join the same commit.
 */
class GroupCommitSqliteDriver implements Driver {
  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly queue: FifoLock,
    private readonly groups: Commits,
    private readonly connection: GroupedConnection,
    private readonly onDestroy: () => void,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.queue.acquire();
    return this.connection;
  }

  async beginTransaction(): Promise<void> {
    this.groups.begin();
  }

  async commitTransaction(): Promise<void> {
    this.connection.pendingCommit = this.groups.commit();
  }

  async rollbackTransaction(): Promise<void> {
    this.groups.rollback();
  }

  async savepoint(_connection: DatabaseConnection, name: string): Promise<void> {
    this.sqlite.exec(`SAVEPOINT ${quoted(name)}`);
  }

  async rollbackToSavepoint(_connection: DatabaseConnection, name: string): Promise<void> {
    this.sqlite.exec(`ROLLBACK TO ${quoted(name)}`);
  }

  async releaseSavepoint(_connection: DatabaseConnection, name: string): Promise<void> {
    this.sqlite.exec(`RELEASE ${quoted(name)}`);
  }

  async releaseConnection(): Promise<void> {
    const committed = this.connection.pendingCommit;
    this.connection.pendingCommit = null;
    this.queue.release();
    if (committed) await committed;
  }

  async destroy(): Promise<void> {
    this.groups.commitNow();
    this.sqlite.close();
    this.onDestroy();
  }
}

class GroupCommitSqliteDialect extends SqliteDialect {
  constructor(private readonly createGroupDriver: () => Driver) {
    super({ database: {} as SqliteDialectConfig['database'] });
  }

  override createDriver(): Driver {
    return this.createGroupDriver();
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
  /** The result (a write's once it is committed), or undefined when the connection is busy. */
  run<R>(query: CompiledQuery<R>): QueryResult<R> | Promise<QueryResult<R>> | undefined;
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

/**
 * The kysely handle of an open better-sqlite3 connection; `onDestroy` runs once it is closed.
 * `groupCommit`: commit the writes of one turn of the event loop together (see `group-commit.ts`;
 * only for the one connection of a process).
 */
export function sqliteKysely(
  sqlite: SQLite.Database,
  onDestroy: () => void = () => {},
  groupCommit = false,
): Kysely<Database> {
  const database = withStatementCache(sqlite);
  const queue = new FifoLock();
  const groups: Commits = groupCommit ? new GroupCommit(database) : new PlainCommit(database);
  const connection = new GroupedConnection(database, groups);
  const db = new Kysely<Database>({
    dialect: new GroupCommitSqliteDialect(
      () => new GroupCommitSqliteDriver(database, queue, groups, connection, onDestroy),
    ),
    // Inside a transaction (which holds the connection) a query runs at once, in its savepoint.
    plugins: [
      new SqliteConnectionMark({ run: (query) => runStatement(database.prepare(query.sql), query.parameters) }),
    ],
  });
  directRunners.set(db, {
    run<R>(query: CompiledQuery<R>) {
      if (queue.busy) return undefined;
      const stmt = database.prepare(query.sql);
      if (stmt.readonly) return runStatement<R>(stmt, query.parameters);
      const { result, committed } = groups.write(() => runStatement<R>(stmt, query.parameters));
      return committed ? committed.then(() => result) : result;
    },
  });
  return db;
}
