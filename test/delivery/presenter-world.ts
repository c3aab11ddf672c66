/**
 * The presenter tests' world: an in-memory SQLite ledger with one conversation, fake timers, and
 * presenters as separate processes would run them over it (each its own claim holder). Each test
 * file calls {@link usePresenterWorld} once at its top level; its hooks give every test a fresh
 * database and put the real timers back after it.
 *
 * Always SQLite, also in the PostgreSQL half of the suite: these tests drive the presenter's timing
 * with fake timers and rely on each query settling before the next timer fires, which holds for
 * in-process SQLite but not for a server round trip. The ledger's queries run on PostgreSQL in the
 * kill and platform-error tests.
 */
import { afterEach, beforeEach, vi } from 'vitest';
import type { CoreMetrics } from '../../src/metrics.js';
import type { Presenter } from '../../src/delivery/presenter.js';
import { type Db, migrateToLatest, openSqlite } from '../../src/store/db.js';
import { ensureConversation } from '../../src/store/repos/conversations.js';
import type { Conversation } from '../../src/store/schema.js';
import type { FakeSurface } from './fake-surface.js';
import { presenterOn } from '../helpers/presenter.js';

/** Let `ms` of simulated time pass, running the timers and promises due in it. */
export const pass = (ms: number) => vi.advanceTimersByTimeAsync(ms);

/** Options of {@link PresenterWorld.presenter}. */
export interface PresenterOptions {
  /** How long an undeliverable row is retried before it is given up; default a day. */
  abandonAfterMs?: number;
  /** Which claim holders are gone; default every one (earlier presenters count as crashed, as after a restart). */
  holderGone?: (holder: string) => boolean;
  metrics?: CoreMetrics;
  /** The handle it works through; default the world's (a test may wrap it to fail a query). */
  db?: Db;
}

/** One test's ledger and the presenters over it. */
export interface PresenterWorld {
  db: Db;
  /** The conversation the tests deliver into (channel `fake`, chat `c1`). */
  conv: Conversation;
  /** A presenter as one process would run it, showing on `surface`, with its own holder name. */
  presenter(surface: FakeSurface, options?: PresenterOptions): Presenter;
}

/** Register the hooks of a presenter test file and return the world of the running test. */
export function usePresenterWorld(): () => PresenterWorld {
  let world: PresenterWorld | undefined;
  let holders = 0;

  beforeEach(async () => {
    const db = openSqlite(':memory:');
    await migrateToLatest(db);
    const conv = await ensureConversation(db, { channel: 'fake', chatKey: 'c1', threadKey: '' }, 'fake:u1');
    vi.useFakeTimers();
    world = {
      db,
      conv,
      presenter(surface, options = {}) {
        return presenterOn(db, surface, {
          holder: `test:${++holders}`,
          rowsDb: options.db,
          metrics: options.metrics,
          abandonAfterMs: options.abandonAfterMs,
          holderGone: options.holderGone ?? (() => true),
        });
      },
    };
  });

  afterEach(async () => {
    vi.useRealTimers();
    const w = world;
    world = undefined;
    await w?.db.destroy();
  });

  return () => {
    if (!world)
      throw new Error('the presenter world is only there inside a test (usePresenterWorld registers its hooks)');
    return world;
  };
}
