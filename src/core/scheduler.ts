/**
 * Scheduling of turn runs, within this process and across instances over one database. Per
 * conversation one run at a time: a second request while it runs makes it run once more. Between
 * processes the conversation's lease row (with its fencing token) decides who runs it; work recorded
 * in a process that does not serve the conversation is announced to the others on the wake bus
 * (PostgreSQL), and the sweep finds whatever an announcement missed. A turn stopped on one instance
 * is announced too (its own channel of the bus), so the instance running it aborts it.
 */
import type { Logger } from 'pino';
import { isPostgresUrl } from '../config.js';
import { enqueueError } from '../delivery/ledger.js';
import type { Db } from '../store/db.js';
import { openWakeBus, type WakeBus } from '../store/wake-bus.js';
import type { CoreEvent } from '../contract/events.js';
import type { Leases } from './leases.js';
import { ParkedLeases, type RunLease } from './parked-leases.js';
import type { ChannelRouter } from './routing.js';
import type { TurnRunner } from './turn-runner.js';

/** What the scheduler needs from the rest of the core. */
export interface SchedulerDeps {
  db: Db;
  /** `store.database_url`: PostgreSQL gets a wake bus, SQLite parked leases. */
  databaseUrl: string;
  leases: Leases;
  router: ChannelRouter;
  /** The turn runner (built after the scheduler: it asks the scheduler to wake conversations). */
  runner: () => TurnRunner;
  emit(conversationId: string, event: CoreEvent): void;
  log: Logger;
}

/** Runs conversations here, one run per conversation at a time, and wakes other instances. */
export class RunScheduler {
  private readonly running = new Map<string, Promise<void>>();
  /** Conversations asked to run again while their run was under way. */
  private readonly dirty = new Set<string>();
  /** Wake-ups still looking up whether to run here or tell other instances (PostgreSQL). */
  private readonly waking = new Set<Promise<void>>();
  /** Wake-ups, and stops told to the instance running the turn (PostgreSQL). */
  private wakeBus: WakeBus<'wake' | 'stop'> | null = null;
  /** Conversation leases held a moment after their turn (SQLite only: see parked-leases.ts). */
  readonly parkedLeases: ParkedLeases | null;
  /** Settles once every tool source made its first connection attempt; runs wait for it. */
  private toolsReady: Promise<void> = Promise.resolve();
  private closing_ = false;

  constructor(private readonly deps: SchedulerDeps) {
    this.parkedLeases = isPostgresUrl(deps.databaseUrl)
      ? null
      : new ParkedLeases(deps.leases, (id) => this.runHere(id), deps.log.child({ part: 'leases' }));
  }

  /** True once shutdown began: nothing new is scheduled. */
  get closing(): boolean {
    return this.closing_;
  }

  /** Runs wait for this (the tool sources' first connection attempt) before they start. */
  waitFor(ready: Promise<void>): void {
    this.toolsReady = ready;
  }

  /** Listen for other instances' wake-ups and stops (PostgreSQL only). */
  async open(): Promise<void> {
    if (!isPostgresUrl(this.deps.databaseUrl)) return;
    const { db, databaseUrl, leases, log } = this.deps;
    this.wakeBus = await openWakeBus(
      db,
      databaseUrl,
      leases.holder.replace(/\s/g, '_'),
      { wake: (id) => this.onWake(id), stop: (id) => this.onStop(id) },
      log,
    );
  }

  /**
   * A conversation's turn was stopped here (recorded cancelled): tell the other instances, one of
   * which may be running it. A lost notice leaves that run going until its next step finds the
   * turn ended.
   */
  announceStop(conversationId: string): void {
    this.wakeBus
      ?.notify('stop', conversationId)
      .catch((err) => this.deps.log.warn({ err, conversationId }, 'telling other instances of a stop failed'));
  }

  /** Another instance stopped a conversation's turn: abort it if it runs here. */
  private onStop(conversationId: string): void {
    if (!this.running.has(conversationId)) return;
    this.deps
      .runner()
      .stoppedElsewhere(conversationId)
      .catch((err) => this.deps.log.warn({ err, conversationId }, 'stopping a turn stopped elsewhere failed'));
  }

  /** Whether a run of the conversation is under way in this process. */
  isRunning(conversationId: string): boolean {
    return this.running.has(conversationId);
  }

  /**
   * Work for a conversation recorded here (a message, a decision): run it here when this instance
   * serves its channel (the lease decides between instances), else tell the other instances
   * (PostgreSQL), one of which serves it.
   */
  wake(conversationId: string): void {
    if (!this.wakeBus) {
      this.runHere(conversationId);
      return;
    }
    const bus = this.wakeBus;
    // Tracked until it has run here (or notified): `idle()` must not report idle in between.
    const waking = this.deps.router
      .conversation(conversationId)
      .then(async (conv) => {
        if (conv && this.deps.router.channelFor(conv)) this.runHere(conversationId);
        else await bus.notify('wake', conversationId);
      })
      .catch((err) => this.deps.log.warn({ err }, 'wake-up notification failed; the sweep will find the work'))
      .finally(() => this.waking.delete(waking));
    this.waking.add(waking);
  }

  /** Another instance recorded work for a conversation. */
  private onWake(conversationId: string): void {
    if (this.closing_) return;
    void this.deps.router
      .conversation(conversationId)
      .then((conv) => {
        if (conv && this.deps.router.channelFor(conv)) this.runHere(conversationId);
      })
      .catch((err) => this.deps.log.warn({ err }, 'wake-up failed; the sweep will find the work'));
  }

  /** Schedule a conversation's runner; a second call while it runs makes it run once more. */
  runHere(conversationId: string): void {
    if (this.closing_) return;
    if (this.running.has(conversationId)) {
      this.dirty.add(conversationId);
      return;
    }
    const task = this.runWhileDirty(conversationId)
      .catch(async (err) => {
        this.deps.log.error({ err, conversationId }, 'turn runner crashed');
        const message = `internal error: ${(err as Error).message}`;
        await enqueueError(this.deps.db, conversationId, message).catch((e) =>
          this.deps.log.error({ err: e }, 'could not queue the error line'),
        );
        this.deps.emit(conversationId, { type: 'error', message });
      })
      .finally(() => this.running.delete(conversationId));
    this.running.set(conversationId, task);
  }

  private async runWhileDirty(conversationId: string): Promise<void> {
    // A message that arrives while MCP servers are still connecting waits for their tools.
    await this.toolsReady;
    const { leases } = this.deps;
    do {
      this.dirty.delete(conversationId);
      // One instance at a time runs a conversation: the lease row decides which. When another
      // holds it, that one re-checks the queue after giving it up, so nothing is stranded.
      const held = this.parkedLeases?.take(conversationId) ?? (await this.claimConversation(conversationId));
      if (!held) return;
      const { lease, stopRenewing } = held;
      let advanced = false;
      let waiting = false;
      try {
        advanced = await this.deps.runner().run(conversationId);
      } finally {
        if (advanced && !this.closing_ && this.parkedLeases) {
          // Kept a moment for the chat's next message (SQLite: see parked-leases.ts).
          this.parkedLeases.park(conversationId, held);
        } else {
          stopRenewing();
          // Messages another instance queued while this one held the lease need a turn (checked
          // in the release itself). Only after a turn was advanced: a conversation this process
          // does not run would otherwise loop here.
          if (advanced && !this.closing_) waiting = await leases.releaseConversation(lease, conversationId);
          else await leases.release(lease);
        }
      }
      if (waiting) this.dirty.add(conversationId);
    } while (this.dirty.has(conversationId) && !this.closing_);
  }

  /** Claim a conversation's lease for a run and keep it renewed; null when another instance holds it. */
  private async claimConversation(conversationId: string): Promise<RunLease | null> {
    const claimedAt = Date.now();
    const lease = await this.deps.leases.claim(`conv:${conversationId}`);
    if (!lease) return null;
    const held: RunLease = { lease, stopRenewing: () => {}, confirmedAt: claimedAt };
    held.stopRenewing = this.deps.leases.keepAlive(
      lease,
      () => {
        this.deps.runner().abort(conversationId);
        this.parkedLeases?.lost(conversationId, lease);
      },
      (since) => {
        held.confirmedAt = since;
      },
    );
    return held;
  }

  /** Resolves when no conversation is running or being woken here. */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.waking.size > 0)
      await Promise.allSettled([...this.waking, ...this.running.values()]);
  }

  /** Stop scheduling: no new run starts and no run goes round again. */
  beginClose(): void {
    this.closing_ = true;
  }

  /** Wait up to `ms` for the runs under way to finish. */
  async drain(ms: number): Promise<void> {
    await Promise.race([Promise.allSettled([...this.running.values()]), new Promise((r) => setTimeout(r, ms).unref())]);
  }

  /** Give up the leases parked after turns (shutdown: their conversations are free for other instances at once). */
  async releaseLeases(): Promise<void> {
    await this.parkedLeases?.releaseAll();
  }

  /** Stop listening to other instances' wake-ups and stops. */
  async closeBus(): Promise<void> {
    await this.wakeBus?.close();
  }
}
