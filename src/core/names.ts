/**
 * The directory of people's display names, one for every channel: a principal (`channel:userId`)
 * is remembered with the name it last came with — an inbound message's `userName`, or the name a
 * channel passes with a tap — so that cards and action outcomes name people alike wherever they
 * are drawn. Names are kept in the store (`people`), so every instance over the database and this
 * one after a restart know them; in memory a bounded number are held for drawing cards without a
 * query (least recently seen forgotten first). An instance starts holding the most recently seen
 * ones; a name it does not hold is looked up in the background the first time it is asked for
 * (shown as the raw id that once), and {@link NameDirectory.lookup} awaits the store.
 */
import type { Logger } from 'pino';
import type { PeopleNames } from '../contract/core.js';
import type { Db } from '../store/db.js';
import { personName, recentPeople, recordPersonName } from '../store/repos/people.js';

/** Most principals held in memory at once. */
export const NAME_DIRECTORY_MAX = 5_000;

/** How long a principal the store had no name for is not looked up again, ms (another instance may learn it). */
export const MISS_RECHECK_MS = 60_000;

/** Display names of principals; persisted when built with a store. */
export class NameDirectory implements PeopleNames {
  private readonly names = new Map<string, string>();
  /** Principals being looked up in the store right now. */
  private readonly looking = new Map<string, Promise<string | undefined>>();
  /** When the store last had no name for a principal: not asked again before {@link MISS_RECHECK_MS}. */
  private readonly missed = new Map<string, number>();

  constructor(
    private readonly store?: { db: Db; log: Logger },
    private readonly max = NAME_DIRECTORY_MAX,
  ) {}

  /** Hold the most recently seen names of the store (at start). */
  async load(): Promise<void> {
    if (!this.store) return;
    // Most recent first from the store; held oldest first so the Map keeps least-recent order.
    for (const p of (await recentPeople(this.store.db, this.max)).reverse()) this.hold(p.principal, p.name);
  }

  /**
   * Remember `name` for `principal`; a blank name (or one equal to the user id) records nothing.
   * A name already held as it is costs no write. Never throws: a failed write is logged.
   */
  async remember(principal: string, name: string | null | undefined): Promise<void> {
    const display = name?.trim();
    if (!display || display === idOf(principal)) return;
    const known = this.names.get(principal) === display;
    this.hold(principal, display);
    if (known || !this.store) return;
    await recordPersonName(this.store.db, principal, display).catch((err: unknown) =>
      this.store?.log.warn({ err, principal }, 'could not record a display name'),
    );
  }

  /** How to name `principal` in a sentence: its name, else its raw user id; nobody is "someone". */
  nameOf = (principal: string | null | undefined): string => {
    if (!principal) return 'someone';
    const held = this.names.get(principal);
    if (held === undefined) void this.fetch(principal);
    return held ?? idOf(principal);
  };

  /** As {@link nameOf}, asking the store for a name this process does not hold. */
  async lookup(principal: string | null | undefined): Promise<string> {
    if (principal && !this.names.has(principal)) await this.fetch(principal);
    return this.nameOf(principal);
  }

  /** Look a name up in the store once at a time per principal, and hold it. */
  private fetch(principal: string): Promise<string | undefined> {
    const store = this.store;
    const missedAt = this.missed.get(principal);
    if (!store || (missedAt !== undefined && Date.now() - missedAt < MISS_RECHECK_MS))
      return Promise.resolve(undefined);
    let pending = this.looking.get(principal);
    if (!pending) {
      pending = personName(store.db, principal)
        .then((name) => {
          // A name remembered meanwhile is newer than the stored one.
          if (name === undefined) this.miss(principal);
          else if (!this.names.has(principal)) this.hold(principal, name);
          return name;
        })
        .catch((err: unknown) => {
          store.log.debug({ err, principal }, 'could not look a display name up');
          return undefined;
        })
        .finally(() => this.looking.delete(principal));
      this.looking.set(principal, pending);
    }
    return pending;
  }

  private miss(principal: string): void {
    this.missed.delete(principal);
    this.missed.set(principal, Date.now());
    if (this.missed.size > this.max) this.missed.delete(this.missed.keys().next().value as string);
  }

  private hold(principal: string, name: string): void {
    this.missed.delete(principal);
    // Re-inserting keeps the Map in least-recently-seen order, so the first key is the one to drop.
    this.names.delete(principal);
    this.names.set(principal, name);
    if (this.names.size > this.max) this.names.delete(this.names.keys().next().value as string);
  }
}

/** The user id of a principal (the part after `channel:`), or the principal when it has no channel. */
function idOf(principal: string): string {
  const at = principal.indexOf(':');
  return at < 0 ? principal : principal.slice(at + 1);
}
