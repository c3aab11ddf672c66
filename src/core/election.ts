/**
 * Elections: work that one instance of all sharing the database does at a time, such as a
 * platform's only receiver (Telegram answers a second concurrent `getUpdates` loop with 409). The
 * instances elect the worker through a lease row named after the work: the holder does the work
 * and renews the lease; the others retry the claim every {@link ELECTION_RETRY_MS}. A holder that
 * dies stops renewing and a standby takes over within TTL + one retry (under 10 s); a holder that
 * finds its lease taken stops its work at once.
 */
import type { Logger } from 'pino';
import type { ElectedWork, Election } from '../contract/core.js';
import type { HeldLease } from '../store/repos/leases.js';
import type { Leases } from './leases.js';

/** How long an election's lease lasts without renewal (renewed every third of it). */
export const ELECTION_LEASE_MS = 6_000;
/** How often a standby instance tries to be elected. */
export const ELECTION_RETRY_MS = 2_000;

/** The lease operations an election uses (the core's {@link Leases}). */
export type ElectionLeases = Pick<Leases, 'claim' | 'keepAlive' | 'release'>;

/**
 * Stand for the election `name` with `work`; resolves after the first try, elected or standing by.
 * @param name the lease row's name, e.g. `telegram-poller:<bot id>` (its part before `:` labels the lease metrics)
 */
export async function stand(leases: ElectionLeases, name: string, work: ElectedWork, log: Logger): Promise<Election> {
  const election = new LeaseElection(leases, name, work, log);
  await election.start();
  return election;
}

/** One instance's place in one election. */
class LeaseElection implements Election {
  private lease: HeldLease | null = null;
  private stopRenewing: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private attempt: Promise<void> = Promise.resolve();

  constructor(
    private readonly leases: ElectionLeases,
    private readonly name: string,
    private readonly work: ElectedWork,
    private readonly log: Logger,
  ) {}

  get elected(): boolean {
    return this.lease !== null;
  }

  /** Try at once, then every {@link ELECTION_RETRY_MS} while standing by. */
  start(): Promise<void> {
    this.timer = setInterval(() => {
      if (!this.lease && !this.stopped) this.attempt = this.attempt.then(() => this.tryClaim());
    }, ELECTION_RETRY_MS);
    this.timer.unref();
    this.attempt = this.tryClaim();
    return this.attempt;
  }

  private async tryClaim(): Promise<void> {
    if (this.lease || this.stopped) return;
    let lease: HeldLease | null;
    try {
      lease = await this.leases.claim(this.name, ELECTION_LEASE_MS);
    } catch (err) {
      this.log.warn({ err, election: this.name }, 'election: claiming the lease failed; retrying');
      return;
    }
    if (!lease) return;
    this.lease = lease;
    this.stopRenewing = this.leases.keepAlive(lease, () => {
      this.lease = null;
      this.stopRenewing = null;
      this.log.warn({ election: this.name }, 'election: another instance took the work over; stopping it here');
      void this.work
        .stop()
        .catch((err) => this.log.error({ err, election: this.name }, 'election: stopping the work failed'));
    });
    this.log.info({ election: this.name, token: lease.token }, 'election: this instance was elected');
    try {
      await this.work.start();
    } catch (err) {
      this.log.error({ err, election: this.name }, 'election: the work could not start; giving the lease up');
      await this.resign();
    }
  }

  private async resign(): Promise<void> {
    const lease = this.lease;
    this.lease = null;
    this.stopRenewing?.();
    this.stopRenewing = null;
    if (lease) await this.leases.release(lease).catch(() => {});
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.attempt.catch(() => {});
    if (this.lease !== null) await this.work.stop();
    await this.resign();
  }
}
