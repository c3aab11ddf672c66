/**
 * What a channel remembers per chat across restarts, such as the Slack assistant thread a DM's
 * replies go to: kept in the settings table, read once and then answered from memory, written
 * through in the background when it changes (a lost write costs only a reply at the top level).
 * Every write bumps the `memos` change counter in its own transaction; a read more than
 * {@link CHECK_AFTER_MS} after the last check looks at the counter (one small query) and forgets
 * what it holds when another process wrote since, so a change made on another instance is seen
 * within about a second.
 */
import type { Logger } from 'pino';
import type { Memo } from '../contract/core.js';
import type { Db } from '../store/db.js';
import { getSetting, setSetting } from '../store/repos/conversations.js';
import { readVersions, withBump } from '../store/repos/versions.js';

/** A read this long after the last look at the change counter looks again first, ms. */
export const CHECK_AFTER_MS = 1000;

/** A {@link Memo} kept under settings named `<name>.<key>`. */
export class SettingsMemo implements Memo {
  /** Values read or set so far; undefined = read, nothing saved. */
  private readonly values = new Map<string, string | undefined>();
  /** Keys whose write has not committed yet: kept when the counter says to forget. */
  private readonly writing = new Map<string, number>();
  /** The `memos` counter when last looked at (-1: not yet), and when. */
  private version = -1;
  private checkedAt = 0;

  constructor(
    private readonly db: Db,
    private readonly name: string,
    private readonly log: Logger,
    private readonly checkAfterMs = CHECK_AFTER_MS,
  ) {}

  async get(key: string): Promise<string | undefined> {
    await this.check();
    if (!this.values.has(key)) {
      const saved = await getSetting(this.db, `${this.name}.${key}`).catch((err: unknown) =>
        this.log.warn({ err, memo: this.name }, 'memo: could not read'),
      );
      // A set while reading wins over what was read.
      if (!this.values.has(key)) this.values.set(key, saved ?? undefined);
    }
    return this.values.get(key);
  }

  set(key: string, value: string): void {
    if (this.values.has(key) && this.values.get(key) === value) return;
    this.values.set(key, value);
    this.writing.set(key, (this.writing.get(key) ?? 0) + 1);
    withBump(this.db, 'memos', (trx) => setSetting(trx, `${this.name}.${key}`, value))
      .catch((err: unknown) => this.log.warn({ err, memo: this.name }, 'memo: could not save'))
      .finally(() => {
        const left = (this.writing.get(key) ?? 1) - 1;
        if (left > 0) this.writing.set(key, left);
        else this.writing.delete(key);
      });
  }

  /** Forget what another process may have changed since the last look (not values still being written). */
  private async check(): Promise<void> {
    const started = Date.now();
    if (started - this.checkedAt < this.checkAfterMs) return;
    this.checkedAt = started;
    let version: number;
    try {
      version = (await readVersions(this.db)).get('memos') ?? 0;
    } catch (err) {
      this.log.warn({ err, memo: this.name }, 'memo: could not read the change counter');
      return;
    }
    if (version === this.version) return;
    this.version = version;
    for (const key of [...this.values.keys()]) if (!this.writing.has(key)) this.values.delete(key);
  }
}
