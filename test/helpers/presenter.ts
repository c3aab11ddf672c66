/**
 * A presenter as one process runs it, over one surface and a database the test holds: for tests
 * of the delivery against a fake surface or a platform's real surface on its emulator.
 */
import type { Channel } from '../../src/contract/channel.js';
import type { Surface } from '../../src/contract/surface.js';
import { Presenter } from '../../src/delivery/presenter.js';
import { silentLogger } from '../../src/log.js';
import { type CoreMetrics, createMetrics } from '../../src/metrics.js';
import type { Db } from '../../src/store/db.js';
import { getConversation } from '../../src/store/repos/conversations.js';

/** What differs between the presenters of the tests. */
export interface PresenterOn {
  /** Its claims' holder: another name is another instance. */
  holder: string;
  /** The channel's name the surface stands for (default `fake`). */
  channel?: string;
  /** Where the rows are read and written when not the conversations' database. */
  rowsDb?: Db;
  metrics?: CoreMetrics;
  abandonAfterMs?: number;
  /** Whether a claim's holder is dead (default: every other holder is alive). */
  holderGone?: (holder: string) => boolean;
}

/** A presenter showing on `surface`, its rows in `db`, with a 15 s claim lifetime. */
export function presenterOn(db: Db, surface: Surface, options: PresenterOn): Presenter {
  const channel: Channel = {
    name: options.channel ?? 'fake',
    capabilities: new Set(),
    surface,
    start: async () => {},
    stop: async () => {},
  };
  return new Presenter({
    db: options.rowsDb ?? db,
    log: silentLogger(),
    metrics: options.metrics ?? createMetrics(),
    abandonAfterMs: options.abandonAfterMs ?? 24 * 3600_000,
    conversation: (id) => getConversation(db, id),
    channelFor: () => channel,
    claims: { holder: options.holder, ttlMs: 15_000, holderGone: options.holderGone ?? (() => false) },
  });
}
