/**
 * A claim write fences the one platform call that follows it before the event loop turns, and
 * soon; any other call confirms in the database (`fresh-claim.ts`).
 */
import { describe, expect, it } from 'vitest';
import { FreshClaim } from '../../src/delivery/fresh-claim.js';

const turnOfLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('FreshClaim', () => {
  it('fences the first call made in the turn of its write, after promise steps only', async () => {
    const fresh = new FreshClaim(5_000);
    fresh.written();
    await Promise.resolve();
    await (async () => {})();
    expect(fresh.take()).toBe(true);
  });

  it('fences one call only: the next one confirms', () => {
    const fresh = new FreshClaim(5_000);
    fresh.written();
    expect(fresh.take()).toBe(true);
    expect(fresh.take()).toBe(false);
  });

  it('does not fence a call made after the event loop turned (the sender may have stalled)', async () => {
    const fresh = new FreshClaim(5_000);
    fresh.written();
    await turnOfLoop();
    expect(fresh.take()).toBe(false);
  });

  it('does not fence a call made after a timer', async () => {
    const fresh = new FreshClaim(5_000);
    fresh.written();
    await new Promise((resolve) => setTimeout(resolve, 1));
    expect(fresh.take()).toBe(false);
  });

  it('does not fence a call made too long after the write, even in the same turn', () => {
    const fresh = new FreshClaim(5_000);
    fresh.written(1_000);
    expect(fresh.take(6_000)).toBe(false);
    fresh.written(1_000);
    expect(fresh.take(5_999)).toBe(true);
  });

  it('fences nothing before any write', () => {
    expect(new FreshClaim(5_000).take()).toBe(false);
  });
});
