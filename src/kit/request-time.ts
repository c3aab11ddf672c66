/**
 * The replay window of a signed webhook request: a platform that signs its requests with a
 * timestamp (Slack's `X-Slack-Request-Timestamp`) makes a captured request replayable for as long
 * as the receiver takes that timestamp, so one too far from now is refused — either way: a request
 * dated ahead could otherwise be replayed for as long as it stays ahead.
 */

/**
 * How far a request's timestamp header (seconds since the epoch) is from now, in whole seconds
 * (positive: ahead), when that is more than `maxSkewSeconds` either way; null when it is within
 * the window, or when the header is missing or not a number (the signature check refuses those).
 */
export function timestampSkew(
  header: string | string[] | undefined,
  maxSkewSeconds: number,
  nowMs = Date.now(),
): number | null {
  const stamp = Number(header);
  if (!Number.isFinite(stamp)) return null;
  const skew = stamp - nowMs / 1000;
  return Math.abs(skew) > maxSkewSeconds ? Math.round(skew) : null;
}
