/**
 * What a channel remembers per chat across restarts, such as the Slack assistant thread a DM's
 * replies go to: read from the settings table once, then answered from memory, and written
 * through in the background when it changes (a lost write costs only a reply at the top level).
 * Another instance's change is seen after this one restarts, which is all a reply-place needs.
 */
import type { Logger } from 'pino';
import type { Memo } from '../contract/core.js';
import type { Db } from '../store/db.js';
import { getSetting, setSetting } from '../store/repos/conversations.js';

/** A {@link Memo} kept under settings named `<name>.<key>`. */
export class SettingsMemo implements Memo {
  /** Values read or set so far; undefined = read, nothing saved. */
  private readonly values = new Map<string, string | undefined>();

  constructor(
    private readonly db: Db,
    private readonly name: string,
    private readonly log: Logger,
  ) {}

  async get(key: string): Promise<string | undefined> {
    if (!this.values.has(key)) {
      const saved = await getSetting(this.db, `${this.name}.${key}`).catch((err: unknown) => this.log.warn({ err, memo: this.name }, 'memo: could not read'));
      // A set while reading wins over what was read.
      if (!this.values.has(key)) this.values.set(key, saved ?? undefined);
    }
    return this.values.get(key);
  }

  set(key: string, value: string): void {
    if (this.values.has(key) && this.values.get(key) === value) return;
    this.values.set(key, value);
    setSetting(this.db, `${this.name}.${key}`, value).catch((err: unknown) => this.log.warn({ err, memo: this.name }, 'memo: could not save'));
  }
}
