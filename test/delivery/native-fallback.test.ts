/** The once-for-the-run fallback from a platform's native rendering (Slack task cards). */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { NativeFallback } from '../../src/delivery/native-fallback.js';

function logger(): { log: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'warn' }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { log, lines };
}

const refused = Object.assign(new Error('refused'), { code: 'nope' });
const refusal = (err: unknown) => ((err as { code?: string }).code === 'nope' ? 'nope' : undefined);

describe('NativeFallback', () => {
  it('uses the native way while it works, and the old way when not wanted', async () => {
    const { log } = logger();
    const f = new NativeFallback({ enabled: true, log, message: 'off', refusal });
    expect(await f.run(true, async (native) => native)).toBe(true);
    expect(await f.run(false, async (native) => native)).toBe(false);
    expect(f.inForce).toBe(true);
  });

  it('is never tried when the setting is off', async () => {
    const { log } = logger();
    const f = new NativeFallback({ enabled: false, log, message: 'off', refusal });
    expect(await f.run(true, async (native) => native)).toBe(false);
    expect(f.inForce).toBe(false);
  });

  it('on a refusal sends the same call again the old way, switches off for good and logs once', async () => {
    const { log, lines } = logger();
    const f = new NativeFallback({ enabled: true, log, message: 'task cards refused', refusal });
    const ways: boolean[] = [];
    const call = async (native: boolean) => {
      ways.push(native);
      if (native) throw refused;
      return 'sent';
    };
    // Two calls at once, both refused: each is sent again, one warning.
    expect(await Promise.all([f.run(true, call), f.run(true, call)])).toEqual(['sent', 'sent']);
    expect(await f.run(true, call)).toBe('sent');
    expect(ways).toEqual([true, true, false, false, false]);
    expect(f.refused).toBe('nope');
    expect(lines.map((l) => l.msg)).toEqual(['task cards refused']);
  });

  it('passes any other failure on, staying native', async () => {
    const { log } = logger();
    const f = new NativeFallback({ enabled: true, log, message: 'off', refusal });
    await expect(
      f.run(true, async () => {
        throw new Error('network');
      }),
    ).rejects.toThrow('network');
    expect(f.inForce).toBe(true);
  });
});
