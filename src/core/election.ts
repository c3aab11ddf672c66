/**
 * Elections: work that one instance of all sharing the database does at a time, such as a
 * platform's only receiver (Telegram answers a second concurrent `getUpdates` loop with 409). The
 * instances elect the worker through a lease row named after the work (`leases`: holder id with
 * host, pid and process start time; expiry; fencing token).
 *
 * - **The holder** renews the lease from a timer of its own (every third of
 *   {@link ELECTION_LEASE_MS}), beside the work, never after it: a start or a handler that takes
 *   long does not hold a renewal up. It **fences** every action: before the work acts (the poller
 *   before each `getUpdates`) it calls {@link Election.fence}, which answers at once while the
 *   last confirmed renewal keeps the lease ours for at least {@link ELECTION_FENCE_MS} more, and
 *   otherwise renews first. So a holder that was starved of CPU (or stopped) past its expiry finds
 *   out before it acts again, and stops its work instead of acting beside its successor; a
 *   starved holder whose lease is still live just renews and goes on.
 * - **A standby** tries to claim every {@link ELECTION_RETRY_MS}, and also exactly when the
 *   holder's lease ends (a holder on another host is given up then, at most
 *   {@link ELECTION_LEASE_MS} after it last renewed). A holder on this host is watched: every
 *   {@link ELECTION_WATCH_MS} the standby looks whether its process still exists (`/proc`, the
 *   same test the resume after a crash uses), and claims the moment it is gone — a SIGKILLed
 *   poller is replaced well under a second later, by a standby or by the restarted process.
 * - Tries never queue behind each other: one is in flight at a time, and a tick that finds one
 *   running is skipped, so a slow claim or work start cannot stall the tries after it.
 *
 * Failover used to leave the chats unpolled for more than 30 s, for good in fact: a holder
 * starved past its expiry (a busy machine, an instance starting beside it) came back to a
 * `getUpdates` it had queued; that request ended the successor's long poll with 409, and the
 * successor's polling loop treated 409 as final and stopped while the successor kept renewing
 * the lease. The stale holder then found its lease taken and stopped too: nobody polled, and the
 * lease said somebody did. The fence keeps the stale holder from polling, and the poller restarts
 * its loop after a 409 while it still holds the lease (`channels/telegram/channel.ts`).
 */
import type { Logger } from 'pino';
import type { ElectedWork, Election } from '../contract/core.js';
import type { HeldLease } from '../store/repos/leases.js';
import { isDeadLocalHolder, isLocalHolder, type Leases } from './leases.js';

/**
 * How long an election's lease lasts without renewal (renewed every third of it). It bounds how
 * long the chats go unserved when a holder on another host dies or stalls (issue: failover within
 * 5 s). It can be this short because a holder fences before it acts: a live holder starved past
 * its expiry loses the lease safely (it stands down before acting again), it does not act beside
 * its successor.
 */
export const ELECTION_LEASE_MS = 4_000;
/** How often a standby instance tries to be elected (besides the holder's expiry and death). */
export const ELECTION_RETRY_MS = 2_000;
/** How often a standby looks whether a holder of this host still exists (a `/proc` read, no query). */
export const ELECTION_WATCH_MS = 200;
/**
 * The holder acts only while its lease is certainly its own for at least this much longer: the
 * time an action (a request on its way to the platform) may take to land.
 */
export const ELECTION_FENCE_MS = 2_000;

/** An election's intervals, ms: the `ELECTION_*` constants unless a caller (a test) needs them shorter. */
export interface ElectionTiming {
  /** {@link ELECTION_LEASE_MS}. */
  leaseMs: number;
  /** {@link ELECTION_RETRY_MS}. */
  retryMs: number;
  /** {@link ELECTION_WATCH_MS}. */
  watchMs: number;
  /** {@link ELECTION_FENCE_MS}. */
  fenceMs: number;
}

/** The intervals every running switchboard uses. */
export const ELECTION_TIMING: Readonly<ElectionTiming> = {
  leaseMs: ELECTION_LEASE_MS,
  retryMs: ELECTION_RETRY_MS,
  watchMs: ELECTION_WATCH_MS,
  fenceMs: ELECTION_FENCE_MS,
};

/** The lease operations an election uses (the core's {@link Leases}). */
export type ElectionLeases = Pick<Leases, 'claim' | 'keepAlive' | 'release' | 'renewOnce' | 'holderOf'>;

/**
 * Stand for the election `name` with `work`; resolves after the first try, elected or standing by.
 * @param name the lease row's name, e.g. `telegram-poller:<bot id>` (its part before `:` labels the lease metrics)
 */
export async function stand(
  leases: ElectionLeases,
  name: string,
  work: ElectedWork,
  log: Logger,
  timing: Readonly<ElectionTiming> = ELECTION_TIMING,
): Promise<Election> {
  const election = new LeaseElection(leases, name, work, log, timing);
  await election.start();
  return election;
}

/** One instance's place in one election. */
class LeaseElection implements Election {
  private lease: HeldLease | null = null;
  /** Until when the lease is certainly ours (the last confirmed claim or renewal, plus its lifetime). */
  private heldUntil = 0;
  private stopRenewing: (() => void) | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  /** The standby's try at the holder's expiry. */
  private expiryTimer: NodeJS.Timeout | null = null;
  /** The standby's look at a holder of this host. */
  private watchTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** The try in flight, if any. */
  private attempt: Promise<void> | null = null;

  constructor(
    private readonly leases: ElectionLeases,
    private readonly name: string,
    private readonly work: ElectedWork,
    private readonly log: Logger,
    private readonly timing: Readonly<ElectionTiming>,
  ) {}

  get elected(): boolean {
    return this.lease !== null;
  }

  /** Try at once, then every {@link ELECTION_RETRY_MS} while standing by. */
  start(): Promise<void> {
    this.retryTimer = setInterval(() => void this.tryNow(), this.timing.retryMs);
    this.retryTimer.unref();
    return this.tryNow();
  }

  async fence(): Promise<boolean> {
    const lease = this.lease;
    if (!lease) return false;
    if (this.heldUntil - Date.now() >= this.timing.fenceMs) return true;
    let since: number | null;
    try {
      since = await this.leases.renewOnce(lease, this.timing.leaseMs);
    } catch (err) {
      // Not certain either way: do not act now; the renewal timer goes on deciding.
      this.log.warn({ err, election: this.name }, 'election: renewing before acting failed');
      return false;
    }
    if (this.lease !== lease) return false;
    if (since === null) {
      this.lost(lease);
      return false;
    }
    this.heldUntil = Math.max(this.heldUntil, since + this.timing.leaseMs);
    return this.heldUntil - Date.now() >= this.timing.fenceMs;
  }

  /** One try, unless one is in flight (then that one). */
  private tryNow(): Promise<void> {
    if (this.lease || this.stopped) return Promise.resolve();
    if (!this.attempt) {
      this.attempt = this.tryClaim().finally(() => {
        this.attempt = null;
      });
    }
    return this.attempt;
  }

  private async tryClaim(): Promise<void> {
    this.clearStandbyTimers();
    const claimedAt = Date.now();
    let lease: HeldLease | null;
    try {
      lease = await this.leases.claim(this.name, this.timing.leaseMs);
    } catch (err) {
      this.log.warn({ err, election: this.name }, 'election: claiming the lease failed; retrying');
      return;
    }
    if (!lease) return this.watchHolder();
    if (this.stopped) {
      await this.leases.release(lease).catch(() => {});
      return;
    }
    this.lease = lease;
    this.heldUntil = claimedAt + this.timing.leaseMs;
    this.stopRenewing = this.leases.keepAlive(
      lease,
      () => this.lost(lease),
      (since) => {
        if (this.lease === lease) this.heldUntil = Math.max(this.heldUntil, since + this.timing.leaseMs);
      },
    );
    this.log.info({ election: this.name, token: lease.token }, 'election: this instance was elected');
    try {
      await this.work.start(this);
    } catch (err) {
      this.log.error({ err, election: this.name }, 'election: the work could not start; giving the lease up');
      if (this.lease === lease) await this.resign();
      return;
    }
    // Lost while starting: the stop then ran before the work was up; stop what started.
    if (this.lease !== lease) await this.stopWork();
  }

  /**
   * Standing by: try again the moment the holder's lease ends and, for a holder of this host, the
   * moment its process is gone (the retry timer covers everything else).
   */
  private async watchHolder(): Promise<void> {
    let row: { holder: string; expiresAt: number } | undefined;
    try {
      row = await this.leases.holderOf(this.name);
    } catch {
      return;
    }
    if (this.stopped || this.lease) return;
    if (!row) {
      this.expiryTimer = setTimeout(() => void this.tryNow(), 0);
      return;
    }
    // A little after the expiry, so the holder's clock and ours need not agree to the millisecond.
    const untilExpiry = Math.max(0, row.expiresAt - Date.now()) + 50;
    if (untilExpiry < this.timing.retryMs * 5) {
      this.expiryTimer = setTimeout(() => void this.tryNow(), untilExpiry);
      this.expiryTimer.unref();
    }
    const holder = row.holder;
    if (!isLocalHolder(holder)) return;
    this.watchTimer = setInterval(() => {
      if (isDeadLocalHolder(holder)) void this.tryNow();
    }, this.timing.watchMs);
    this.watchTimer.unref();
  }

  private clearStandbyTimers(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    if (this.watchTimer) clearInterval(this.watchTimer);
    this.expiryTimer = null;
    this.watchTimer = null;
  }

  /** Another instance holds the lease now: stop the work here at once. */
  private lost(lease: HeldLease): void {
    if (this.lease !== lease) return;
    this.lease = null;
    this.heldUntil = 0;
    this.stopRenewing?.();
    this.stopRenewing = null;
    this.log.warn({ election: this.name }, 'election: another instance took the work over; stopping it here');
    void this.stopWork();
    // Stand by at once: watch the new holder rather than wait for the next tick.
    void this.tryNow();
  }

  private stopWork(): Promise<void> {
    return this.work
      .stop()
      .catch((err) => this.log.error({ err, election: this.name }, 'election: stopping the work failed'));
  }

  private async resign(): Promise<void> {
    const lease = this.lease;
    this.lease = null;
    this.heldUntil = 0;
    this.stopRenewing?.();
    this.stopRenewing = null;
    if (lease) await this.leases.release(lease).catch(() => {});
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearInterval(this.retryTimer);
    this.clearStandbyTimers();
    await this.attempt?.catch(() => {});
    if (this.lease !== null) await this.work.stop();
    await this.resign();
  }
}
