import { afterEach, describe, expect, it } from 'vitest';
import { Scheduler, type SchedulerHost } from '../../src/jobs/scheduler.js';
import { FakeClock, flush } from './fake-clock.js';

let scheduler: Scheduler | null = null;
afterEach(async () => {
  await scheduler?.stop();
  scheduler = null;
});

/** A host over an in-memory list of due instants. */
function host(due: number[], slots = 4) {
  const started: number[] = [];
  let running = 0;
  const h: SchedulerHost & { started: number[]; finishOne(): void; lookups: number } = {
    started,
    lookups: 0,
    freeSlots: () => slots - running,
    async earliestDue() {
      h.lookups++;
      return due.length ? Math.min(...due) : null;
    },
    async runDue(now, limit) {
      const ready = due.filter((t) => t <= now).sort((a, b) => a - b);
      for (const t of ready.slice(0, limit)) {
        due.splice(due.indexOf(t), 1);
        started.push(now);
        running++;
      }
      return Math.min(ready.length, limit);
    },
    onError: (err) => {
      throw err;
    },
    finishOne() {
      running--;
    },
  };
  return h;
}

describe('Scheduler on a fake clock', () => {
  it('sleeps until the next due job instead of polling, and runs it on time', async () => {
    const clock = new FakeClock(1_000_000);
    const h = host([1_000_000 + 7_000]);
    scheduler = new Scheduler(h, clock, 30_000);
    scheduler.start();
    await flush();
    expect(scheduler.sleeps).toEqual([7_000]);
    await clock.advance(6_999);
    expect(h.started).toEqual([]);
    await clock.advance(1);
    expect(h.started).toEqual([1_007_000]);
    // Nothing left: it sleeps the resync interval, one look-up per wake-up.
    expect(scheduler.sleeps.at(-1)).toBe(30_000);
    expect(h.lookups).toBe(2);
  });

  it('with nothing due it wakes only every resync interval', async () => {
    const clock = new FakeClock(0);
    const h = host([]);
    scheduler = new Scheduler(h, clock, 30_000);
    scheduler.start();
    await flush();
    for (let i = 0; i < 10; i++) await clock.advance(30_000);
    expect(h.lookups).toBe(11);
    expect(new Set(scheduler.sleeps)).toEqual(new Set([30_000]));
  });

  it('a wake re-reads at once (a job added in this process)', async () => {
    const clock = new FakeClock(0);
    const due: number[] = [];
    const h = host(due);
    scheduler = new Scheduler(h, clock, 30_000);
    scheduler.start();
    await flush();
    due.push(2_000);
    scheduler.wake();
    await flush();
    expect(scheduler.sleeps.at(-1)).toBe(2_000);
    await clock.advance(2_000);
    expect(h.started).toEqual([2_000]);
  });

  it('bounded concurrency: with slots full it waits for a free slot, then starts the rest', async () => {
    const clock = new FakeClock(0);
    const due = Array.from({ length: 10 }, () => 1_000);
    const h = host(due, 4);
    scheduler = new Scheduler(h, clock, 30_000);
    scheduler.start();
    await flush();
    await clock.advance(1_000);
    expect(h.started).toHaveLength(4);
    h.finishOne();
    h.finishOne();
    scheduler.wake();
    await flush();
    expect(h.started).toHaveLength(6);
  });
});
