import { describe, expect, it } from 'vitest';
import { timestampSkew } from '../../src/kit/request-time.js';

const NOW = 1_700_000_000_000;

describe('timestampSkew', () => {
  it('is null within the window, either way', () => {
    expect(timestampSkew(String(NOW / 1000), 300, NOW)).toBeNull();
    expect(timestampSkew(String(NOW / 1000 - 300), 300, NOW)).toBeNull();
    expect(timestampSkew(String(NOW / 1000 + 300), 300, NOW)).toBeNull();
  });

  it('says how far off a timestamp outside the window is (ahead: positive)', () => {
    expect(timestampSkew(String(NOW / 1000 - 301), 300, NOW)).toBe(-301);
    expect(timestampSkew(String(NOW / 1000 + 600), 300, NOW)).toBe(600);
  });

  it('leaves a missing or malformed header to the signature check', () => {
    expect(timestampSkew(undefined, 300, NOW)).toBeNull();
    expect(timestampSkew('soon', 300, NOW)).toBeNull();
    expect(timestampSkew(['1', '2'], 300, NOW)).toBeNull();
  });
});
