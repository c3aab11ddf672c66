/**
 * The transports' one retry (`delivery/short-retry.ts`): a 429 with a short retry-after is waited
 * out, at most twice; anything else is the caller's at once. Both ways a platform says 429 are
 * covered: a thrown error (Slack's WebClient) and an answer value (the Telegram Bot API).
 */
import { describe, expect, it } from 'vitest';
import { SHORT_RETRY_AFTER_SECONDS, SHORT_RETRY_ATTEMPTS, waitingOutShort429 } from '../../src/delivery/short-retry.js';

class RateLimited extends Error {
  constructor(readonly retryAfter: number) {
    super('429');
  }
}
const thrown = { error: (err: unknown) => (err instanceof RateLimited ? err.retryAfter : undefined) };
type Answer = { ok: true } | { ok: false; retry_after?: number };
const answered = { result: (a: Answer) => (a.ok ? undefined : a.retry_after) };

/** A call that fails with `failures` in turn, then succeeds; `calls` counts and times them. */
function scripted<T>(failures: Array<() => T | never>, success: T) {
  const at: number[] = [];
  const call = async (): Promise<T> => {
    at.push(Date.now());
    const next = failures[at.length - 1];
    return next ? next() : success;
  };
  return { call, at };
}

describe('waiting out a short 429', () => {
  it('waits a short retry-after out and calls again (thrown 429s)', async () => {
    const s = scripted(
      [
        () => {
          throw new RateLimited(0.1);
        },
        () => {
          throw new RateLimited(0.05);
        },
      ],
      'sent',
    );
    expect(await waitingOutShort429(s.call, thrown)).toBe('sent');
    expect(s.at).toHaveLength(3);
    expect(s.at[1]! - s.at[0]!).toBeGreaterThanOrEqual(90);
  });

  it(`gives up after ${SHORT_RETRY_ATTEMPTS} waits: the third 429 is the caller's`, async () => {
    const s = scripted(
      Array.from({ length: 5 }, () => () => ({ ok: false, retry_after: 0.01 }) as Answer),
      { ok: true } as Answer,
    );
    expect(await waitingOutShort429(s.call, answered)).toEqual({ ok: false, retry_after: 0.01 });
    expect(s.at).toHaveLength(SHORT_RETRY_ATTEMPTS + 1);
  });

  it('hands a long retry-after, another error or another answer back at once', async () => {
    const long = scripted([() => ({ ok: false, retry_after: SHORT_RETRY_AFTER_SECONDS + 1 }) as Answer], {
      ok: true,
    } as Answer);
    expect(await waitingOutShort429(long.call, answered)).toEqual({
      ok: false,
      retry_after: SHORT_RETRY_AFTER_SECONDS + 1,
    });
    expect(long.at).toHaveLength(1);
    const longThrown = scripted(
      [
        () => {
          throw new RateLimited(SHORT_RETRY_AFTER_SECONDS + 1);
        },
      ],
      'sent',
    );
    await expect(waitingOutShort429(longThrown.call, thrown)).rejects.toBeInstanceOf(RateLimited);
    expect(longThrown.at).toHaveLength(1);
    const other = scripted(
      [
        () => {
          throw new Error('ECONNRESET');
        },
      ],
      'sent',
    );
    await expect(waitingOutShort429(other.call, thrown)).rejects.toThrow('ECONNRESET');
    expect(other.at).toHaveLength(1);
    const refused = scripted([() => ({ ok: false }) as Answer], { ok: true } as Answer);
    expect(await waitingOutShort429(refused.call, answered)).toEqual({ ok: false });
    expect(refused.at).toHaveLength(1);
  });

  it("takes a lower line between short and long: above it is the caller's, at it is waited out", async () => {
    const above = scripted([() => ({ ok: false, retry_after: 0.2 }) as Answer], { ok: true } as Answer);
    expect(await waitingOutShort429(above.call, answered, undefined, 0.1)).toEqual({ ok: false, retry_after: 0.2 });
    expect(above.at).toHaveLength(1);
    const at = scripted([() => ({ ok: false, retry_after: 0.1 }) as Answer], { ok: true } as Answer);
    expect(await waitingOutShort429(at.call, answered, undefined, 0.1)).toEqual({ ok: true });
    expect(at.at).toHaveLength(2);
    expect(at.at[1]! - at.at[0]!).toBeGreaterThanOrEqual(90);
  });

  it('confirms after each wait, before calling again; a refusal there stops the call', async () => {
    const confirmed: number[] = [];
    const again = scripted(
      [() => ({ ok: false, retry_after: 0.01 }) as Answer, () => ({ ok: false, retry_after: 0.01 }) as Answer],
      { ok: true } as Answer,
    );
    const confirm = async () => void confirmed.push(again.at.length);
    expect(await waitingOutShort429(again.call, answered, undefined, undefined, confirm)).toEqual({ ok: true });
    // Once after each of the two waits, each time before the next call: none before the first.
    expect(confirmed).toEqual([1, 2]);
    const taken = scripted([() => ({ ok: false, retry_after: 0.01 }) as Answer], { ok: true } as Answer);
    const refuse = () => Promise.reject(new Error('claim taken over'));
    await expect(waitingOutShort429(taken.call, answered, undefined, undefined, refuse)).rejects.toThrow('taken over');
    expect(taken.at).toHaveLength(1);
  });

  it('an abort during the wait rejects at once and calls no more', async () => {
    const controller = new AbortController();
    const s = scripted([() => ({ ok: false, retry_after: 3 }) as Answer], { ok: true } as Answer);
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);
    await expect(waitingOutShort429(s.call, answered, controller.signal)).rejects.toThrow(/aborted/);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(s.at).toHaveLength(1);
  });
});
