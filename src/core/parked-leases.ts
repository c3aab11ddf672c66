/**
 * Conversation leases kept for a moment after a turn. Under load a chat's next message usually
 * arrives within a second of the reply; claiming the lease again for it, and giving it up after,
 * are two commits per message for nothing when this process runs the chat anyway. So after a turn
 * the lease stays held (and renewed) for {@link PARK_MS}; a turn starting meanwhile takes it as
 * it is. Once the time is up it is given up with the usual check for messages queued meanwhile
 * by another process, which then get their run here.
 *
 * Used on SQLite only, where one process normally runs every conversation. Over PostgreSQL,
 * instances behind a load balancer hand chats to each other all the time, and a parked lease
 * would hold another instance back.
 */
import type { Logger } from 'pino';
import type { HeldLease } from '../store/repos/leases.js';
import type { Leases } from './leases.js';

/** How long a conversation's lease stays held after its turn. */
export const PARK_MS = 1000;

/** A held conversation lease and how to stop renewing it. */
export interface RunLease {
  lease: HeldLease;
  stopRenewing: () => void;
  /** When the lease was last claimed or renewed (it is held until then plus its lifetime). */
  confirmedAt: number;
}

interface Parked {
  /** The run's own object: its renewals keep updating `confirmedAt`. */
  run: RunLease;
  timer: NodeJS.Timeout;
  /** Set once the lease is being given up (the timer fired, or shutdown). */
  releasing?: Promise<void>;
}

/** The conversation leases this instance holds between turns. */
export class ParkedLeases {
  private readonly parked = new Map<string, Parked>();

  constructor(
    private readonly leases: Leases,
    /** Runs when a released lease's conversation has messages queued without a turn. */
    private readonly onQueued: (conversationId: string) => void,
    private readonly log: Logger,
    private readonly parkMs = PARK_MS,
  ) {}

  /**
   * The conversation's parked lease, now taken for a run; undefined when none is parked, or when
   * its last renewal is so old that it may have run out (a stalled process): then it is given up
   * and the caller claims the conversation anew, through the database.
   */
  take(conversationId: string): RunLease | undefined {
    const p = this.parked.get(conversationId);
    if (!p || p.releasing) return undefined;
    if (!this.fresh(p)) {
      void this.release(conversationId, false);
      return undefined;
    }
    clearTimeout(p.timer);
    this.parked.delete(conversationId);
    return p.run;
  }

  /**
   * Whether the conversation's lease is parked here and surely still held (renewed recently
   * enough): no other process can run the conversation until this one gives it up.
   */
  holds(conversationId: string): boolean {
    const p = this.parked.get(conversationId);
    return p !== undefined && !p.releasing && this.fresh(p);
  }

  /** A parked lease renewed within half its lifetime: it cannot have run out. */
  private fresh(p: Parked): boolean {
    return Date.now() - p.run.confirmedAt <= this.leases.defaultTtlMs / 2;
  }

  /** Keep a run's lease for {@link PARK_MS}, then give it up. */
  park(conversationId: string, held: RunLease): void {
    const timer = setTimeout(() => void this.release(conversationId), this.parkMs);
    timer.unref();
    this.parked.set(conversationId, { run: held, timer });
  }

  /** The lease was lost to another instance while parked: forget it (it is not ours to release). */
  lost(conversationId: string, lease: HeldLease): void {
    const p = this.parked.get(conversationId);
    if (p?.run.lease !== lease) return;
    clearTimeout(p.timer);
    this.parked.delete(conversationId);
  }

  /** Give every parked lease up now (shutdown). */
  async releaseAll(): Promise<void> {
    await Promise.allSettled([...this.parked.keys()].map((id) => this.release(id, false)));
  }

  private release(conversationId: string, runQueued = true): Promise<void> {
    const p = this.parked.get(conversationId);
    if (!p) return Promise.resolve();
    if (p.releasing) return p.releasing;
    clearTimeout(p.timer);
    p.run.stopRenewing();
    p.releasing = this.leases
      .releaseConversation(p.run.lease, conversationId)
      .then((queued) => {
        if (queued && runQueued) this.onQueued(conversationId);
      })
      .catch((err) =>
        this.log.warn({ err, conversationId }, 'could not give a conversation lease up; it runs out by itself'),
      )
      .finally(() => {
        if (this.parked.get(conversationId) === p) this.parked.delete(conversationId);
      });
    return p.releasing;
  }
}
