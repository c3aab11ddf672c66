/**
 * Login links are 256-bit tokens, so guessing one is hopeless; still, nobody should be able to try
 * hundreds a second. Per client address: the first {@link FREE_FAILURES} failed logins in a
 * {@link WINDOW_MS} window cost nothing, each one after that closes `/login` to that address for
 * twice as long as the last (1 s, 2 s, 4 s … at most {@link MAX_BLOCK_MS}), and a request while
 * it is closed is answered 429 with `Retry-After` without looking at its token (a valid link is
 * not used up). A success forgets the address. In memory, per process: behind a reverse proxy
 * every client is the proxy's address, which then slows everyone's logins, never stops them.
 */

/** Failed logins per address and window that are not slowed. */
export const FREE_FAILURES = 5;
/** Failures older than this (and not blocking) are forgotten. */
export const WINDOW_MS = 15 * 60_000;
/** The longest an address waits between two tries. */
export const MAX_BLOCK_MS = 60_000;
/** Addresses remembered at most (oldest dropped first); bounds memory under a spray of addresses. */
const MAX_ADDRESSES = 10_000;

interface Entry {
  first: number;
  failures: number;
  blockedUntil: number;
}

/** The per-address login limiter (see the file comment). */
export class LoginLimiter {
  private readonly entries = new Map<string, Entry>();

  /** Milliseconds until `address` may try again; 0 when it may now. */
  waitMs(address: string, now = Date.now()): number {
    const e = this.live(address, now);
    return e ? Math.max(0, e.blockedUntil - now) : 0;
  }

  /** Count a failed login of `address`. */
  failed(address: string, now = Date.now()): void {
    let e = this.live(address, now);
    if (!e) {
      this.makeRoom(now);
      e = { first: now, failures: 0, blockedUntil: 0 };
      this.entries.set(address, e);
    }
    e.failures++;
    if (e.failures >= FREE_FAILURES) {
      e.blockedUntil = now + Math.min(1000 * 2 ** (e.failures - FREE_FAILURES), MAX_BLOCK_MS);
    }
  }

  /** A successful login: the address starts afresh. */
  succeeded(address: string): void {
    this.entries.delete(address);
  }

  /** The entry of an address, unless its window has passed and it blocks nothing. */
  private live(address: string, now: number): Entry | undefined {
    const e = this.entries.get(address);
    if (e && now - e.first > WINDOW_MS && now >= e.blockedUntil) {
      this.entries.delete(address);
      return undefined;
    }
    return e;
  }

  private makeRoom(now: number): void {
    if (this.entries.size < MAX_ADDRESSES) return;
    for (const [address] of this.entries) this.live(address, now);
    // Still full: the oldest entries go (a Map iterates in insertion order).
    for (const [address] of this.entries) {
      if (this.entries.size < MAX_ADDRESSES) break;
      this.entries.delete(address);
    }
  }
}
