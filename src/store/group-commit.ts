/**
 * Group commit for the one SQLite connection of a process: the writes made in one turn of the
 * event loop share one transaction, committed when the loop reaches its check phase.
 *
 * Why: a commit writes every page the transaction changed to the WAL (two `pwrite`s a page) and
 * takes and drops the file locks; under load a reply made four of them (its receipt, its answer,
 * its delivery's claim and outcome), each rewriting the same few index pages. Committed together,
 * the writes of many conversations cost about one commit.
 *
 * Only for a process with one connection to the file (`switchboard start`): a group holds the write
 * lock until the check phase, so a second connection in the same thread (a test's second
 * instance, a command run with `spawnSync` meanwhile) would wait synchronously for a lock only
 * this thread can release. Every other handle commits each write at once ({@link PlainCommit}).
 *
 * What it keeps: a write's promise settles only once its transaction is committed, so nothing a
 * caller does after awaiting a write (a post to a platform, above all) can happen before the write
 * is on disk, exactly as with one commit per write. A failed transaction is rolled back alone (it
 * runs inside a savepoint of the group). Reads see the group's writes before they are committed
 * (the same connection), which is harmless: anything with an outside effect awaits a write of its
 * own first (a delivery's claim), and that commits after the writes it read.
 */
import type SQLite from 'better-sqlite3';
import { SwitchboardError } from '../errors.js';

/** How a connection commits: in groups ({@link GroupCommit}) or each write at once ({@link PlainCommit}). */
export interface Commits {
  /** Whether a transaction is open: its statements are already inside it. */
  readonly transactionOpen: boolean;
  /** Run a write outside a transaction; `committed` is null when it is committed already. */
  write<T>(run: () => T): { result: T; committed: Promise<void> | null };
  begin(): void;
  /** End the transaction, keeping its writes; null when they are committed already. */
  commit(): Promise<void> | null;
  rollback(): void;
  /** Commit what is open (before the connection is closed). */
  commitNow(): void;
}

/** SQLite's own way: a write outside a transaction commits by itself, a transaction at its end. */
export class PlainCommit implements Commits {
  private open = false;
  private readonly control: Record<'begin' | 'commit' | 'rollback', SQLite.Statement>;

  constructor(sqlite: SQLite.Database) {
    this.control = {
      begin: sqlite.prepare('BEGIN'),
      commit: sqlite.prepare('COMMIT'),
      rollback: sqlite.prepare('ROLLBACK'),
    };
  }

  get transactionOpen(): boolean {
    return this.open;
  }

  write<T>(run: () => T): { result: T; committed: null } {
    return { result: run(), committed: null };
  }

  begin(): void {
    this.control.begin.run();
    this.open = true;
  }

  commit(): null {
    this.control.commit.run();
    this.open = false;
    return null;
  }

  rollback(): void {
    if (!this.open) return;
    this.open = false;
    // An error SQLite answers by rolling back everything (disk full) has ended it already.
    if (this.control.rollback.database.inTransaction) this.control.rollback.run();
  }

  commitNow(): void {}
}

/** Raised to the writers of a group SQLite rolled back by itself (disk full, I/O error). */
export class GroupRolledBackError extends SwitchboardError {}

interface Group {
  readonly done: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function newGroup(): Group {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A group nobody awaits any more (its writer gave up) must not crash the process when it fails.
  done.catch(() => {});
  return { done, resolve, reject };
}

function rolledBack(): GroupRolledBackError {
  return new GroupRolledBackError(
    'transaction_rolled_back',
    'SQLite rolled the transaction back (see the error before)',
  );
}

/**
 * The check phase of this turn of the event loop, as Node schedules it. Taken when the module
 * loads: a test's fake timers replace `setImmediate` later, and a commit is not a timer a test
 * steps through — held back, it would leave every writer waiting.
 */
const atCheckPhase = globalThis.setImmediate;

/** The savepoint a transaction of the group runs in (one at a time: the connection is locked). */
const SAVEPOINT = 'switchboard_transaction';

/**
 * The open group of a connection, if any, and the transaction running inside it. Every method is
 * synchronous (better-sqlite3 is); the promises they return settle when the group commits.
 */
export class GroupCommit implements Commits {
  private group: Group | null = null;
  private inTransaction = false;
  /** The check phase came while a transaction was open: commit as soon as it ends. */
  private commitWhenFree = false;

  /** The control statements, prepared once: `exec` parses its SQL on every call. */
  private readonly control: Record<'begin' | 'commit' | 'savepoint' | 'release' | 'rollbackTo', SQLite.Statement>;

  constructor(private readonly sqlite: SQLite.Database) {
    this.control = {
      begin: sqlite.prepare('BEGIN IMMEDIATE'),
      commit: sqlite.prepare('COMMIT'),
      savepoint: sqlite.prepare(`SAVEPOINT ${SAVEPOINT}`),
      release: sqlite.prepare(`RELEASE ${SAVEPOINT}`),
      rollbackTo: sqlite.prepare(`ROLLBACK TO ${SAVEPOINT}`),
    };
  }

  /** Whether a transaction (savepoint) is open: its statements are already inside the group. */
  get transactionOpen(): boolean {
    return this.inTransaction;
  }

  /**
   * Run a write (or anything that may write) in the current group, opening one when none is
   * open; resolves once the group is committed.
   */
  write<T>(run: () => T): { result: T; committed: Promise<void> } {
    const group = this.join();
    return { result: run(), committed: group.done };
  }

  /** Start a transaction: a savepoint inside the group. */
  begin(): void {
    this.join();
    this.control.savepoint.run();
    this.inTransaction = true;
  }

  /** End the transaction begun by {@link begin}, keeping its writes; resolves once committed. */
  commit(): Promise<void> {
    const group = this.group;
    if (!group || !this.sqlite.inTransaction) {
      // SQLite rolled everything back by itself (disk full, I/O error): the writes are gone.
      this.inTransaction = false;
      this.failGroup();
      return group?.done ?? Promise.reject(rolledBack());
    }
    // Should the release fail, the transaction stays open for the rollback that follows.
    this.control.release.run();
    this.inTransaction = false;
    if (this.commitWhenFree) this.flush();
    return group.done;
  }

  /** Undo the transaction begun by {@link begin}; the rest of the group stays. */
  rollback(): void {
    if (!this.inTransaction) return;
    this.inTransaction = false;
    // An error SQLite answers by rolling back everything (disk full) has ended the group already.
    if (this.sqlite.inTransaction) {
      this.control.rollbackTo.run();
      this.control.release.run();
    }
    if (this.commitWhenFree) this.flush();
  }

  /** Commit the open group now (before the connection is closed). */
  commitNow(): void {
    if (!this.inTransaction) this.flush();
  }

  private join(): Group {
    // A group SQLite rolled back by itself is over: its writers learn it, later writes start anew.
    if (this.group && !this.sqlite.inTransaction) this.failGroup();
    if (this.group) return this.group;
    // Immediate: the group takes the write lock at once (waiting out another process's write as
    // `busy_timeout` allows), so a read inside it can never make a later write fail as stale.
    this.control.begin.run();
    const group = newGroup();
    this.group = group;
    atCheckPhase(this.flush);
    return group;
  }

  private readonly flush = (): void => {
    const group = this.group;
    if (!group) return;
    if (this.inTransaction) {
      this.commitWhenFree = true;
      return;
    }
    this.commitWhenFree = false;
    if (!this.sqlite.inTransaction) {
      this.failGroup();
      return;
    }
    this.group = null;
    try {
      this.control.commit.run();
      group.resolve();
    } catch (err) {
      try {
        if (this.sqlite.inTransaction) this.sqlite.exec('ROLLBACK');
      } catch {
        // The rollback's own error adds nothing to the commit's, which the writers get.
      }
      group.reject(err);
    }
  };

  private failGroup(): void {
    const group = this.group;
    this.group = null;
    this.commitWhenFree = false;
    group?.reject(rolledBack());
  }
}
