/**
 * The one retry a transport makes for a delivery call: a 429 whose retry-after is short is
 * waited out in place, at most {@link SHORT_RETRY_ATTEMPTS} times. Everything else — a longer
 * 429, a server error, a network failure — goes back to the presenter at once, which keeps the
 * delivery's row, backs off as the platform asked and sends again (one retry layer; see
 * `test/delivery/retry-layer.test.ts`). Each transport says only how its platform spells a 429.
 */

/** Longest retry-after a delivery call waits out in its transport, seconds; a longer one is the presenter's. */
export const SHORT_RETRY_AFTER_SECONDS = 5;
/** Short 429s a delivery call waits out before it is the presenter's. */
export const SHORT_RETRY_ATTEMPTS = 2;

/** What a wait listens to for an abort (DOM's `AbortSignal`, or a platform SDK's own). */
export interface AbortLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** How a platform's answer says "429, wait this long". */
export interface RateLimitOf<T> {
  /** Seconds a thrown error asks to wait when it is a 429; undefined for any other error. */
  error?(err: unknown): number | undefined;
  /** Seconds an answer asks to wait when it is a 429 (APIs that answer errors as values). */
  result?(value: T): number | undefined;
}

/**
 * Run `call`, waiting out a short 429 and calling again; the last answer (or error) is the
 * caller's. An abort of `signal` during a wait rejects at once. `shortAfterSeconds` is the longest
 * retry-after counted as short (default {@link SHORT_RETRY_AFTER_SECONDS}; tests lower it so that
 * a long one need not take long). `afterWait` runs after each wait, before the call goes again: a
 * delivery confirms its claim there (`ConfirmSend`), which may have been taken over meanwhile.
 */
export async function waitingOutShort429<T>(
  call: () => Promise<T>,
  rateLimit: RateLimitOf<T>,
  signal?: AbortLike,
  shortAfterSeconds = SHORT_RETRY_AFTER_SECONDS,
  afterWait?: () => Promise<void>,
): Promise<T> {
  const isShort = (after: number | undefined, attempt: number): boolean =>
    after !== undefined && after <= shortAfterSeconds && attempt < SHORT_RETRY_ATTEMPTS;
  for (let attempt = 0; ; attempt++) {
    let after: number | undefined;
    try {
      const value = await call();
      after = rateLimit.result?.(value);
      if (!isShort(after, attempt)) return value;
    } catch (err) {
      after = rateLimit.error?.(err);
      if (!isShort(after, attempt)) throw err;
    }
    await pause((after as number) * 1000, signal);
    await afterWait?.();
  }
}

function pause(ms: number, signal: AbortLike | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('aborted while waiting out a 429'));
    const onAbort = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      reject(new Error('aborted while waiting out a 429'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort);
  });
}
