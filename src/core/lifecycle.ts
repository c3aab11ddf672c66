/**
 * Start and shutdown of one core. Start: channels, the wake bus, the tool sources' first
 * connection, recovery, the services, then the periodic sweep. Shutdown takes no new work, gives
 * running turns their grace period to reach a safe point, aborts the rest (their state stays in
 * the database for the next start) and closes everything in the reverse order.
 */
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import type { ChannelCore } from '../contract/roles.js';
import type { CoreParts } from './assembly.js';

/** What start and shutdown take from the core's options. */
export interface LifecycleOptions {
  /** Started after recovery, stopped first (the job service). */
  services?: Array<{ start(): Promise<void>; stop(): Promise<void> }>;
  onClose?: Array<() => Promise<void>>;
  sweepIntervalMs?: number;
  shutdownGraceMs?: number;
}

/** Resolves after `ms` (a bound on a wait at shutdown). */
const after = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

/** Starts and closes one core's parts. */
export class CoreLifecycle {
  private sweeper: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly parts: CoreParts,
    private readonly options: LifecycleOptions,
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /**
   * Start channels, then recover: re-emit pending approvals and questions, resume unfinished
   * turns and answer queued messages; then check expiries and outside decisions periodically.
   */
  async start(core: ChannelCore): Promise<void> {
    const { scheduler, presenter, registry, maintenance, router } = this.parts;
    // Tool sources connect while the channels start; each bounds its own wait and never throws.
    const tools = registry.connectAll();
    scheduler.waitFor(tools.catch((err) => this.log.error({ err }, 'tool sources failed to start')));
    presenter.holdUntilRecovered();
    for (const channel of router.list()) await channel.start(core);
    await scheduler.open();
    await tools;
    await registry.recordKnown(this.db);
    await maintenance.recover();
    for (const service of this.options.services ?? []) await service.start();
    this.sweeper = setInterval(() => {
      maintenance.sweep().catch((err) => this.log.error({ err }, 'sweep failed'));
    }, this.options.sweepIntervalMs ?? 1000);
    this.sweeper.unref();
  }

  /**
   * Stop taking work, give running turns `shutdownGraceMs` to reach a safe point, abort the rest,
   * stop channels and close the database.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    const { scheduler, runner, fanout, presenter, registry, router, leases } = this.parts;
    scheduler.beginClose();
    if (this.sweeper) clearInterval(this.sweeper);
    for (const service of this.options.services ?? [])
      await service.stop().catch((err) => this.log.warn({ err }, 'service stop failed'));
    for (const channel of router.list()) {
      await channel.stop().catch((err) => this.log.warn({ err, channel: channel.name }, 'channel stop failed'));
    }
    await scheduler.drain(this.options.shutdownGraceMs ?? 5000);
    runner.abortAll();
    await scheduler.drain(2000);
    await Promise.race([fanout.settled(), after(2000)]);
    // Rows still open are delivered by the next start.
    await Promise.race([presenter.idle(), after(2000)]);
    presenter.close();
    await registry.closeAll();
    for (const hook of this.options.onClose ?? [])
      await hook().catch((err) => this.log.warn({ err }, 'close hook failed'));
    await scheduler.releaseLeases();
    this.closed = true;
    leases.close();
    await scheduler.closeBus();
    await this.db.destroy();
  }
}
