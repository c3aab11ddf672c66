/**
 * The inbound work of one channel: what its receiver is handling right now. Work of one key (a
 * chat, a thread) runs in arrival order and different keys concurrently; every piece is tracked,
 * so a channel's `stop` waits for what is being handled (bounded, so a hung platform call cannot
 * hold a shutdown) and tests can wait until everything received so far has reached the core.
 */
import type { Logger } from 'pino';

/** How long a channel's `stop` waits for inbound work being handled, ms (the default of {@link InboundQueue.drain}). */
export const STOP_DRAIN_MS = 5_000;

/** Per-key ordered, tracked inbound work. */
export class InboundQueue {
  /** The newest work of each key, which later work of that key runs after. */
  private readonly tails = new Map<string, Promise<void>>();
  /** Everything being handled (queued by key or only tracked). */
  private readonly active = new Set<Promise<unknown>>();

  /** @param log where a failed piece of queued work is logged, with `what` */
  constructor(
    private readonly log: Logger,
    private readonly what: string,
  ) {}

  /**
   * Run `work` after the earlier work of `key` (a failure is logged and does not hold the
   * key's later work up). Resolves when it has finished.
   */
  run(key: string, work: () => Promise<void>): Promise<void> {
    const next = (this.tails.get(key) ?? Promise.resolve())
      .then(work)
      .catch((err: unknown) => this.log.error({ err }, this.what));
    this.tails.set(key, next);
    void next.finally(() => {
      if (this.tails.get(key) === next) this.tails.delete(key);
    });
    return this.track(next);
  }

  /** Track work that orders itself (its outcome, a failure included, is the caller's). */
  track<T>(work: Promise<T>): Promise<T> {
    this.active.add(work);
    const forget = () => this.active.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** Resolves once every piece received so far, and any queued meanwhile, has finished. */
  async settled(): Promise<void> {
    while (this.active.size > 0) await Promise.allSettled([...this.active]);
  }

  /** Wait for the work being handled now, no longer than `ms` (shutdown). */
  async drain(ms = STOP_DRAIN_MS): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.active]), new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }
}
