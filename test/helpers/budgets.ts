/**
 * The time budgets of tests, named once. A test's waits are ceilings on something that normally
 * takes milliseconds; on a loaded 2-core CI machine they stretch, and a test must then fail (if at
 * all) at the wait that names what did not happen, never at vitest's anonymous test timeout. So a
 * test's timeout is not picked: it is {@link budget} of the waits it contains, and a wait that
 * includes a child process's start-up is measured from spawn to the process's own readiness signal
 * with {@link CHILD_START_MS}, not with a step's ceiling.
 */

/**
 * A child process (`switchboard start`, `switchboard chat --jsonl`, an MCP server it spawns) from
 * spawn to its readiness signal (the "switchboard started" log line, the channel's connection,
 * the first JSON line) on a loaded machine. A start costs a few seconds of CPU; with the machine
 * oversubscribed that becomes tens of seconds of wall time (here, at a load of 19 on 2 cores, a
 * `switchboard start` missed 30 s, and the math worker took 28 s to load mathjs in plain node). It
 * is the value the one-instance tests already gave a start (the web chat, ack-after-record,
 * no-model, demo), now one constant instead of 20, 30 and 60 s scattered per file. It is a
 * ceiling: nothing waits for it unless the process never gets ready.
 */
export const CHILD_START_MS = 60_000;

/** One step of a ready process (a reply, a card, a redraw): `waitFor`'s default in harness.ts. */
export const WAIT_MS = 10_000;

/** One step of a ready JSONL child, read over its stdout: `waitForLine`'s default in jsonl-process.ts. */
export const LINE_WAIT_MS = 15_000;

/**
 * A test's timeout from the ceilings of the waits it contains, plus one {@link WAIT_MS} for the
 * work between them that has no wait of its own (assertions, database reads, a harness start-up).
 * Pass each wait's ceiling, once per wait: `budget(CHILD_START_MS, ...times(6, WAIT_MS))`.
 */
export function budget(...waits: number[]): number {
  for (const w of waits) {
    if (!Number.isFinite(w) || w <= 0) throw new Error(`budget: a wait's ceiling must be a positive number, got ${w}`);
  }
  return waits.reduce((sum, w) => sum + w, WAIT_MS);
}

/** `n` waits of `ceiling` each: `budget(...times(6, WAIT_MS))`. */
export function times(n: number, ceiling: number): number[] {
  return Array.from({ length: n }, () => ceiling);
}
