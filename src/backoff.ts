/**
 * The one back-off rule of the project's background retries: the first pause, doubled after each
 * failure, up to a longest pause. A delivery sent again later, an MCP server reconnected and a
 * channel's command menu registered again (`kit/background-retry.ts`) all wait by it (each adds
 * what is its own: a delivery waits at least what the platform asked, a reconnect adds jitter). At
 * the root of `src/`, below every folder that retries.
 */

/**
 * The pause before the next try after `failures` failed ones (0: the first retry), ms:
 * `firstMs · 2^failures`, never more than `maxMs`.
 */
export function backoffMs(failures: number, firstMs: number, maxMs: number): number {
  // The exponent is capped so a long outage cannot overflow to Infinity before the cap applies.
  return Math.min(maxMs, firstMs * 2 ** Math.min(Math.max(failures, 0), 30));
}
