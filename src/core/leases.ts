/**
 * This instance's side of the lease rows (`src/store/repos/leases.ts`): claim work, keep it
 * renewed while it runs, give it up after, and count claims, takeovers and losses for `/metrics`.
 * Every instance over one database (and every process over one SQLite file) has its own holder id.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import {
  claimLease,
  getLease,
  type HeldLease,
  releaseConversationLease,
  releaseLease,
  renewLease,
  takeLeaseFrom,
} from '../store/repos/leases.js';
import type { CoreMetrics } from '../metrics.js';

/**
 * A unique name for this process: host, pid, a random part (pids repeat across restarts) and,
 * where the system shows it (Linux), the process's start time, so that a later process that got
 * the same pid is not taken for this one.
 */
export function newHolderId(): string {
  const started = processStat(process.pid)?.startTime;
  return `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}${started ? `:${started}` : ''}`;
}

/** A process's state letter and start time (clock ticks after boot) from `/proc/<pid>/stat`; undefined elsewhere. */
function processStat(pid: number): { state: string; startTime: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: the fields after it are
  // state (3rd) … starttime (22nd).
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const startTime = fields[19];
  return state && startTime ? { state, startTime } : undefined;
}

/** Holder ids of the cores open in this process (tests and tools may open several). */
const liveHolders = new Set<string>();

/** Claims, renews and releases leases for one instance. */
export class Leases {
  private readonly held = new Map<string, HeldLease>();
  private readonly ttls = new Map<string, number>();

  constructor(
    private readonly db: Db,
    readonly holder: string,
    private readonly ttlMs: number,
    private readonly metrics: CoreMetrics,
    private readonly log: Logger,
  ) {
    liveHolders.add(holder);
  }

  /** This holder stops existing (the core closed): its leftover rows count as a dead process's. */
  close(): void {
    liveHolders.delete(this.holder);
  }

  /**
   * Claim `name` for `ttlMs` (default: `store.lease_seconds`); null when another instance holds it. A lease still held by a process of this
   * host that no longer exists (killed, restarted) is taken at once instead of after its expiry.
   */
  async claim(name: string, ttlMs = this.ttlMs): Promise<HeldLease | null> {
    let lease = await claimLease(this.db, name, this.holder, ttlMs);
    if (!lease) {
      const row = await getLease(this.db, name);
      if (!row || !isDeadLocalHolder(row.holder)) return null;
      lease = await takeLeaseFrom(this.db, name, this.holder, row, ttlMs);
      if (!lease) return null;
    }
    this.metrics.leaseClaims.inc({ kind: kindOf(name) });
    if (lease.takenOver) {
      this.metrics.leaseTakeovers.inc({ kind: kindOf(name) });
      this.log.info({ lease: name, token: lease.token }, 'took over a lease whose holder stopped renewing it');
    }
    this.held.set(name, lease);
    this.ttls.set(name, ttlMs);
    return lease;
  }

  /**
   * Renew `lease` every third of its lifetime until the returned function is called. When a
   * renewal finds the lease gone (this instance stalled past the expiry and another took over),
   * `onLost` runs once and renewing stops: the work must stop too. `onRenewed` gets the time each
   * successful renewal was issued (the lease is certainly held until that time plus its lifetime).
   */
  keepAlive(lease: HeldLease, onLost: () => void, onRenewed?: (since: number) => void): () => void {
    let stopped = false;
    const ttlMs = this.ttls.get(lease.name) ?? this.ttlMs;
    const timer = setInterval(
      () => {
        const since = Date.now();
        renewLease(this.db, lease, this.holder, ttlMs, since)
          .then((ok) => {
            if (ok) onRenewed?.(since);
            if (ok || stopped) return;
            stopped = true;
            clearInterval(timer);
            // Counted once, whichever renewal found it lost first (this one or a renewOnce).
            if (this.held.get(lease.name) !== lease) return onLost();
            this.held.delete(lease.name);
            this.metrics.leaseLosses.inc({ kind: kindOf(lease.name) });
            this.log.warn(
              { lease: lease.name, token: lease.token },
              'lost a lease to another instance; stopping its work',
            );
            onLost();
          })
          .catch((err) => this.log.warn({ err, lease: lease.name }, 'lease renewal failed; retrying'));
      },
      Math.max(100, Math.floor(ttlMs / 3)),
    );
    timer.unref();
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }

  /**
   * Renew `lease` once, now (outside {@link keepAlive}'s rhythm): the time the renewal was issued
   * (the lease is certainly held until that time plus `ttlMs`), or null when it was lost, which is
   * counted and logged like a loss found by {@link keepAlive}. Throws when the database fails.
   */
  async renewOnce(lease: HeldLease, ttlMs = this.ttls.get(lease.name) ?? this.ttlMs): Promise<number | null> {
    const since = Date.now();
    if (await renewLease(this.db, lease, this.holder, ttlMs, since)) return since;
    if (this.held.get(lease.name) === lease) {
      this.held.delete(lease.name);
      this.metrics.leaseLosses.inc({ kind: kindOf(lease.name) });
      this.log.warn({ lease: lease.name, token: lease.token }, 'lost a lease to another instance; stopping its work');
    }
    return null;
  }

  /** Who holds `name` now and until when (epoch ms); undefined when the row does not exist. */
  async holderOf(name: string): Promise<{ holder: string; expiresAt: number } | undefined> {
    const row = await getLease(this.db, name);
    return row ? { holder: row.holder, expiresAt: Number(row.expires_at) } : undefined;
  }

  /** Give `lease` up (a lost lease is left to its new holder). */
  async release(lease: HeldLease): Promise<void> {
    if (this.held.get(lease.name) === lease) this.held.delete(lease.name);
    await releaseLease(this.db, lease, this.holder);
  }

  /**
   * Give a conversation's lease up; true when the conversation has queued messages and no
   * unfinished turn (see {@link releaseConversationLease}): they need a run.
   */
  async releaseConversation(lease: HeldLease, conversationId: string): Promise<boolean> {
    if (this.held.get(lease.name) === lease) this.held.delete(lease.name);
    return releaseConversationLease(this.db, lease, this.holder, conversationId);
  }

  /** The lifetime of a lease claimed without an explicit one (`store.lease_seconds`). */
  get defaultTtlMs(): number {
    return this.ttlMs;
  }

  /** Leases this instance holds now, by name (for `/healthz`). */
  list(): HeldLease[] {
    return [...this.held.values()];
  }
}

/** Whether a holder id names a process of this host (whose life {@link isDeadLocalHolder} can look at). */
export function isLocalHolder(holder: string): boolean {
  return holder.split(':', 1)[0] === os.hostname();
}

/**
 * Whether a holder id names a process of this host that is gone: its pid does not exist, is a
 * zombie (killed, not yet reaped by its parent: it runs nothing and renews nothing), belongs to a
 * later process (another start time), or is this very process under an id no open core has (a
 * container restarted with the same pid).
 */
export function isDeadLocalHolder(holder: string): boolean {
  const [host, pidText, , startTime] = holder.split(':');
  if (host !== os.hostname()) return false;
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return !liveHolders.has(holder);
  const stat = processStat(pid);
  if (stat)
    return stat.state === 'Z' || stat.state === 'X' || (startTime !== undefined && stat.startTime !== startTime);
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The metric label of a lease: the part of its name before the first `:`. */
function kindOf(name: string): string {
  return name.split(':', 1)[0] ?? name;
}
