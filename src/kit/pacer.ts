/**
 * Pacing of outbound messages below platform limits, by waiting rather than failing: each limit
 * is a generic cell rate (GCRA, a token bucket kept as one number per key). A send waits until
 * every limit it falls under has room, then takes its slot. Each channel declares its platform's
 * rates beside its transport (its own `rates.ts`).
 */

/** A rate: one send per `intervalMs` on average, with bursts of up to `burst` at once. */
export interface Rate {
  intervalMs: number;
  burst: number;
}

/** A limit that applies to one send: its key and rate. */
export interface Limit {
  key: string;
  rate: Rate;
}

/** Time for the pacer; tests pass a fake one. */
export interface PacerClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: PacerClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Keys idle this long are forgotten (their bucket is full again anyway). */
const FORGET_AFTER_MS = 10 * 60_000;

/** Paces sends under any number of keyed limits. */
export class Pacer {
  /** Theoretical arrival time per key. */
  private readonly tat = new Map<string, number>();
  private lastSweep = 0;
  /** Total time sends waited, ms, and how many waited (for metrics and benchmarks). */
  waitedMs = 0;
  waits = 0;

  constructor(private readonly clock: PacerClock = realClock) {}

  /**
   * Wait until every limit allows a send, then count it. The slot is taken when the send is
   * released, not when it starts waiting: timers that fire late (a busy event loop) then cannot
   * release a bunch of sends at once.
   * @returns how long the send waited, ms.
   */
  async take(limits: Limit[]): Promise<number> {
    const asked = this.clock.now();
    for (;;) {
      const now = this.clock.now();
      this.forgetIdle(now);
      let start = now;
      for (const { key, rate } of limits) {
        const tat = this.tat.get(key) ?? now;
        start = Math.max(start, tat - (rate.burst - 1) * rate.intervalMs);
      }
      if (start <= now) {
        for (const { key, rate } of limits)
          this.tat.set(key, Math.max(this.tat.get(key) ?? now, now) + rate.intervalMs);
        const waited = now - asked;
        if (waited > 0) {
          this.waits++;
          this.waitedMs += waited;
        }
        return waited;
      }
      await this.clock.sleep(start - now);
    }
  }

  private forgetIdle(now: number): void {
    if (now - this.lastSweep < FORGET_AFTER_MS) return;
    this.lastSweep = now;
    for (const [key, tat] of this.tat) if (tat < now - FORGET_AFTER_MS) this.tat.delete(key);
  }
}
