/** A clock for scheduler tests: time moves only when the test advances it. */
import type { Clock } from '../../src/jobs/scheduler.js';

export class FakeClock implements Clock {
  private sleepers: Array<{ until: number; resolve: () => void }> = [];
  /** Every sleep length asked for. */
  readonly asked: number[] = [];

  constructor(public t: number) {}

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      this.asked.push(ms);
      if (signal.aborted) return resolve();
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((s) => s !== entry);
        resolve();
      };
      const entry = {
        until: this.t + ms,
        resolve: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.sleepers.push(entry);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Move time forward and wake every sleeper whose time has come. */
  async advance(ms: number): Promise<void> {
    this.t += ms;
    const due = this.sleepers.filter((s) => s.until <= this.t);
    this.sleepers = this.sleepers.filter((s) => s.until > this.t);
    for (const s of due) s.resolve();
    await flush();
  }

  /** How many loops are asleep. */
  get waiting(): number {
    return this.sleepers.length;
  }
}

/** Let pending promise callbacks run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}
