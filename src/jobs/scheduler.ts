/**
 * The scheduler loop: sleep until the earliest due job (one indexed look-up), claim what is due
 * while run slots are free, sleep again. No polling over rows: 10 000 stored jobs cost one
 * `min()` per wake-up. It also wakes every `resyncMs` to see changes made by other processes,
 * and at once when this process changes a job ({@link Scheduler.wake}).
 */

/** Time as the scheduler sees it; tests pass a fake one. */
export interface Clock {
  now(): number;
  /** Resolve after `ms`, or early when `signal` fires. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    }),
};

/** What the loop asks of the job service. */
export interface SchedulerHost {
  /** Run slots free in this process. */
  freeSlots(): number;
  /** Earliest due instant of a job this process can run, or null. */
  earliestDue(): Promise<number | null>;
  /** Claim and start up to `limit` due occurrences; returns how many due occurrences it saw. */
  runDue(now: number, limit: number): Promise<number>;
  /** Report a failed pass (the loop carries on). */
  onError(err: unknown): void;
}

/** Sleeps until the next due job and hands due occurrences to the host. */
export class Scheduler {
  private stopped = true;
  private wakeController = new AbortController();
  private loopDone: Promise<void> = Promise.resolve();
  /** Sleep lengths, newest last (bounded; tests and /metrics read them). */
  readonly sleeps: number[] = [];

  constructor(
    private readonly host: SchedulerHost,
    private readonly clock: Clock,
    private readonly resyncMs: number,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loopDone = this.loop();
  }

  /** Stop the loop; resolves once it has left its current pass. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeController.abort();
    await this.loopDone;
  }

  /** Re-read the schedule now (a job was added or changed, or a run slot freed). */
  wake(): void {
    this.wakeController.abort();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      // A fresh signal per pass: a wake during the pass makes the next sleep return at once.
      const signal = this.wakeController.signal;
      let wait = this.resyncMs;
      try {
        let seen = 0;
        const free = this.host.freeSlots();
        if (free > 0) seen = await this.host.runDue(this.clock.now(), free);
        if (seen > 0) continue;
        if (this.host.freeSlots() > 0) {
          const next = await this.host.earliestDue();
          // A due job that runDue did not see (another process is claiming it) is re-read soon.
          if (next !== null)
            wait = Math.min(
              wait,
              Math.max(next - this.clock.now(), 0, seen === 0 && next <= this.clock.now() ? 50 : 0),
            );
        }
      } catch (err) {
        this.host.onError(err);
        wait = Math.min(wait, 1_000);
      }
      if (this.stopped) return;
      this.sleeps.push(wait);
      if (this.sleeps.length > 100) this.sleeps.shift();
      await this.clock.sleep(wait, signal);
      if (signal.aborted) this.wakeController = new AbortController();
    }
  }
}
