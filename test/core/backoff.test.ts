/** The one back-off rule: the first pause, doubled per failure, capped — and no overflow past the cap. */
import { describe, expect, it } from 'vitest';
import { backoffMs } from '../../src/backoff.js';

describe('backoffMs', () => {
  it('starts at the first pause and doubles per failure', () => {
    expect([0, 1, 2, 3].map((n) => backoffMs(n, 1_000, 60_000))).toEqual([1_000, 2_000, 4_000, 8_000]);
  });

  it('never exceeds the longest pause, however long the outage', () => {
    expect(backoffMs(6, 1_000, 60_000)).toBe(60_000);
    expect(backoffMs(10_000, 1_000, 60_000)).toBe(60_000);
    expect(Number.isFinite(backoffMs(Number.MAX_SAFE_INTEGER, 60_000, 3_600_000))).toBe(true);
  });

  it('treats a negative count as none', () => {
    expect(backoffMs(-3, 500, 10_000)).toBe(500);
  });
});
