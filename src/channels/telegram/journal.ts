/**
 * The update journal: closes the gap between "Telegram considers an update delivered" and "we
 * handled it". With `@grammyjs/runner`, the next `getUpdates` (which confirms the previous offset)
 * runs while earlier updates are still being handled; a crash then would lose them. So a
 * `getUpdates` transformer writes each fetched batch to the database *before* returning it, and
 * an update leaves the journal only once handled. On start the journal is replayed; the core's
 * inbound de-duplication (`telegram:update:<id>`) makes a replay of a handled update harmless.
 */
import type { Transformer } from 'grammy';
import type { Update } from 'grammy/types';
import type { Logger } from 'pino';

/** Settings key holding the journal (a JSON array of raw updates). */
export const JOURNAL_SETTING = 'telegram.update_journal';

/** Where the journal is persisted (the core's settings table). */
export interface JournalStore {
  getSetting(key: string): Promise<string | undefined>;
  setSetting(key: string, value: string): Promise<void>;
}

/** Fetched-but-unhandled updates, persisted. */
export class UpdateJournal {
  private readonly pending = new Map<number, Update>();
  private writing: Promise<void> = Promise.resolve();
  /** The write that has not started yet, if any: later changes join it. */
  private queued: Promise<void> | null = null;

  constructor(
    private readonly store: () => JournalStore,
    private readonly log: Logger,
  ) {}

  /** Load updates left over from a previous run, oldest first. */
  async load(): Promise<Update[]> {
    const raw = await this.store().getSetting(JOURNAL_SETTING);
    if (!raw) return [];
    try {
      const list = JSON.parse(raw) as Update[];
      for (const u of list) this.pending.set(u.update_id, u);
      return [...list].sort((a, b) => a.update_id - b.update_id);
    } catch (err) {
      this.log.error({ err }, 'telegram: update journal unreadable; starting empty');
      return [];
    }
  }

  /** Record updates durably. */
  async add(updates: Update[]): Promise<void> {
    if (updates.length === 0) return;
    for (const u of updates) this.pending.set(u.update_id, u);
    await this.persist();
  }

  /** An update was handled (successfully or not: a failing update must not block the others). */
  async done(updateId: number): Promise<void> {
    if (!this.pending.delete(updateId)) return;
    await this.persist();
  }

  /** Number of updates not yet handled. */
  get size(): number {
    return this.pending.size;
  }

  /**
   * Writes are serialised; each writes the whole current set (it is small: the in-flight updates).
   * Calls that arrive while a write is running share the one next write: it is taken after they
   * changed the set, so it records all of them. Under load that is one write for many updates
   * handled at once, instead of one each.
   */
  private persist(): Promise<void> {
    if (this.queued) return this.queued;
    const run = this.writing.then(() => {
      this.queued = null;
      return this.store().setSetting(JOURNAL_SETTING, JSON.stringify([...this.pending.values()]));
    });
    this.queued = run;
    this.writing = run.catch((err) => this.log.error({ err }, 'telegram: could not write the update journal'));
    return run;
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
