/**
 * The update journal: closes the gap between "Telegram considers an update delivered" and "we
 * handled it". With `@grammyjs/runner`, the next `getUpdates` (which confirms the previous offset)
 * runs while earlier updates are still being handled; a crash then would lose them. So a
 * `getUpdates` transformer writes each fetched batch to the database (one row per update, one
 * transaction per batch) *before* returning it, and an update leaves the journal once handled. On
 * start the journal is replayed; the core's inbound de-duplication (`telegram:update:<id>`) makes
 * a replay of a handled update harmless, so handled updates are forgotten in batches: one delete
 * for all the updates handled within {@link FORGET_DELAY_MS}, instead of a write per update.
 */
import type { Transformer } from 'grammy';
import type { Update } from 'grammy/types';
import type { Logger } from 'pino';

/** The journal's `source` in the core's inbound journal. */
export const JOURNAL_SOURCE = 'telegram';

/** Handled updates are forgotten together, at most this long after the first of them. */
export const FORGET_DELAY_MS = 200;

/** Where the journal is persisted (the core's inbound journal). */
export interface JournalStore {
  journalUpdates(source: string, updates: Array<{ id: number; payload: string }>): Promise<void>;
  forgetUpdates(source: string, ids: number[]): Promise<void>;
  journaledUpdates(source: string): Promise<Array<{ id: number; payload: string }>>;
}

/** Fetched-but-unhandled updates, persisted. */
export class UpdateJournal {
  /** Handled updates not yet forgotten in the store. */
  private handled: number[] = [];
  private forgetTimer: NodeJS.Timeout | null = null;
  private forgetting: Promise<void> = Promise.resolve();
  /** Updates journaled and not yet handled (for `size`). */
  private readonly pending = new Set<number>();

  constructor(
    private readonly store: () => JournalStore,
    private readonly log: Logger,
  ) {}

  /** Load updates left over from a previous run, oldest first. An unreadable row is dropped. */
  async load(): Promise<Update[]> {
    const rows = await this.store().journaledUpdates(JOURNAL_SOURCE);
    const updates: Update[] = [];
    for (const row of rows) {
      try {
        updates.push(JSON.parse(row.payload) as Update);
        this.pending.add(row.id);
      } catch (err) {
        this.log.error({ err, update: row.id }, 'telegram: journaled update unreadable; dropping it');
        this.handled.push(row.id);
      }
    }
    if (this.handled.length) await this.flush();
    return updates;
  }

  /** Record updates durably (resolves once they are written). */
  async add(updates: Update[]): Promise<void> {
    if (updates.length === 0) return;
    await this.store().journalUpdates(
      JOURNAL_SOURCE,
      updates.map((u) => ({ id: u.update_id, payload: JSON.stringify(u) })),
    );
    for (const u of updates) this.pending.add(u.update_id);
  }

  /**
   * An update was handled (successfully or not: a failing update must not block the others). It
   * is forgotten with the others handled about now; until then a crash only replays it.
   */
  done(updateId: number): void {
    if (!this.pending.delete(updateId)) return;
    this.handled.push(updateId);
    if (this.forgetTimer) return;
    this.forgetTimer = setTimeout(() => void this.flush(), FORGET_DELAY_MS);
    this.forgetTimer.unref();
  }

  /** Number of updates not yet handled. */
  get size(): number {
    return this.pending.size;
  }

  /** Forget every handled update now (also on shutdown); resolves once written. */
  flush(): Promise<void> {
    if (this.forgetTimer) clearTimeout(this.forgetTimer);
    this.forgetTimer = null;
    const ids = this.handled;
    this.handled = [];
    if (ids.length === 0) return this.forgetting;
    // Serialised, so a later delete never overtakes an earlier one that failed and is re-queued.
    this.forgetting = this.forgetting.then(() =>
      this.store()
        .forgetUpdates(JOURNAL_SOURCE, ids)
        .catch((err) => {
          this.log.warn(
            { err, count: ids.length },
            'telegram: could not forget handled updates; they stay journaled (a replay skips them)',
          );
        }),
    );
    return this.forgetting;
  }

  /** A `getUpdates` transformer that journals each batch before handing it to the runner. */
  transformer(): Transformer {
    return async (prev, method, payload, signal) => {
      const res = await prev(method, payload, signal);
      if (method === 'getUpdates' && res.ok && Array.isArray(res.result)) await this.add(res.result as Update[]);
      return res;
    };
  }
}
