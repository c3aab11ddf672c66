/**
 * Names for skipped suites: a suite that may be skipped carries its reason in its name, which the
 * skip reporter (test/reporters/skips.ts) prints at the end of the run.
 */

/** `" (skipped: REASON)"` when `reason` is set, else `""`: append it to a suite's or test's name. */
export function skipped(reason: string | undefined): string {
  return reason === undefined ? '' : ` (skipped: ${reason})`;
}
