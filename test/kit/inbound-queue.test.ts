/**
 * A channel's inbound work (`kit/inbound-queue.ts`): per key in order, keys concurrently, a
 * failure logged without holding its key up, and shutdown waiting for what is handled — bounded.
 */
import { describe, expect, it, vi } from 'vitest';
import { InboundQueue, STOP_DRAIN_MS } from '../../src/kit/inbound-queue.js';
import { silentLogger } from '../../src/log.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('inbound queue', () => {
  it('runs one key in order and different keys side by side', async () => {
    const q = new InboundQueue(silentLogger(), 'failed');
    const order: string[] = [];
    const piece = (name: string, ms: number) => async () => {
      order.push(`${name}+`);
      await sleep(ms);
      order.push(`${name}-`);
    };
    void q.run('a', piece('a1', 60));
    void q.run('a', piece('a2', 10));
    void q.run('b', piece('b1', 10));
    await q.settled();
    // a2 starts only after a1 ended; b1 ran while a1 did.
    expect(order.indexOf('a2+')).toBeGreaterThan(order.indexOf('a1-'));
    expect(order.indexOf('b1-')).toBeLessThan(order.indexOf('a1-'));
  });

  it('a failing piece is logged and the key goes on', async () => {
    const errors: unknown[] = [];
    const log = { ...silentLogger(), error: (o: unknown) => errors.push(o) } as unknown as ReturnType<
      typeof silentLogger
    >;
    const q = new InboundQueue(log, 'failed');
    const ran: string[] = [];
    await q.run('a', async () => {
      throw new Error('boom');
    });
    await q.run('a', async () => {
      ran.push('after');
    });
    expect(ran).toEqual(['after']);
    expect(errors).toHaveLength(1);
  });

  it('tracks work that orders itself, its outcome left to the caller', async () => {
    const q = new InboundQueue(silentLogger(), 'failed');
    await expect(q.track(Promise.reject(new Error('to the caller')))).rejects.toThrow('to the caller');
    let done = false;
    void q.track(sleep(50).then(() => (done = true)));
    await q.settled();
    expect(done).toBe(true);
  });

  it('settled waits for work queued meanwhile; drain gives up after its time', async () => {
    const q = new InboundQueue(silentLogger(), 'failed');
    const ran: string[] = [];
    void q.run('a', async () => {
      await sleep(20);
      void q.run('b', async () => {
        await sleep(20);
        ran.push('queued meanwhile');
      });
    });
    await q.settled();
    expect(ran).toEqual(['queued meanwhile']);

    void q.run('hung', () => new Promise<void>(() => {}));
    const at = Date.now();
    await q.drain(100);
    expect(Date.now() - at).toBeLessThan(1_000);
  });

  it('waits STOP_DRAIN_MS for the work being handled when given no bound', async () => {
    vi.useFakeTimers();
    try {
      const q = new InboundQueue(silentLogger(), 'failed');
      void q.run('hung', () => new Promise<void>(() => {}));
      let drained = false;
      const draining = q.drain().then(() => {
        drained = true;
      });
      await vi.advanceTimersByTimeAsync(STOP_DRAIN_MS - 1);
      expect(drained).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await draining;
      expect(drained).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
