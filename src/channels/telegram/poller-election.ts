/**
 * One `getUpdates` loop per bot token across all instances: Telegram answers a second concurrent
 * poller with 409. The instances elect the poller through a lease row (`telegram-poller:<bot id>`):
 * the holder polls and renews; the others retry the claim every {@link POLLER_RETRY_MS}. A holder
 * that dies stops renewing and a standby takes over within TTL + one retry (under 10 s); a
 * holder that finds its lease taken stops its loop at once.
 */
import type { Logger } from 'pino';
import type { HeldLease, LeaseClaims } from '../../contract/core.js';

/** How long the poller lease lasts without renewal (renewed every third of it). */
export const POLLER_LEASE_MS = 6_000;
/** How often a standby instance tries to become the poller. */
export const POLLER_RETRY_MS = 2_000;

/** What the election drives: start and stop the polling loop. */
export interface PollerControl {
  startPolling(): Promise<void>;
  stopPolling(): Promise<void>;
}

/** Runs the election for one bot on this instance. */
export class PollerElection {
  private lease: HeldLease | null = null;
  private stopRenewing: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private attempt: Promise<void> = Promise.resolve();

  constructor(
    private readonly leases: LeaseClaims,
    private readonly name: string,
    private readonly control: PollerControl,
    private readonly log: Logger,
  ) {}

  /** Whether this instance is the poller now. */
  get isPoller(): boolean {
    return this.lease !== null;
  }

  /** Try at once, then every {@link POLLER_RETRY_MS} while standing by. */
  start(): Promise<void> {
    this.timer = setInterval(() => {
      if (!this.lease && !this.stopped) this.attempt = this.attempt.then(() => this.tryClaim());
    }, POLLER_RETRY_MS);
    this.timer.unref();
    this.attempt = this.tryClaim();
    return this.attempt;
  }

  private async tryClaim(): Promise<void> {
    if (this.lease || this.stopped) return;
    let lease: HeldLease | null;
    try {
      lease = await this.leases.claim(this.name, POLLER_LEASE_MS);
    } catch (err) {
      this.log.warn({ err }, 'telegram: poller election failed; retrying');
      return;
    }
    if (!lease) return;
    this.lease = lease;
    this.stopRenewing = this.leases.keepAlive(lease, () => {
      this.lease = null;
      this.stopRenewing = null;
      this.log.warn('telegram: another instance took over polling; stopping this loop');
      void this.control.stopPolling().catch((err) => this.log.error({ err }, 'telegram: stopping the poller failed'));
    });
    this.log.info({ lease: this.name, token: lease.token }, 'telegram: this instance polls');
    try {
      await this.control.startPolling();
    } catch (err) {
      this.log.error({ err }, 'telegram: polling could not start; giving the lease up');
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

  /** Stop standing and polling; give the lease up so another instance polls at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.attempt.catch(() => {});
    const wasPoller = this.lease !== null;
    if (wasPoller) await this.control.stopPolling();
    await this.resign();
  }
}
