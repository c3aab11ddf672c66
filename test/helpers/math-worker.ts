/**
 * The math worker thread of this test process, started before the tests that call `math`. Its
 * start (loading mathjs) is a child's start: on a loaded machine it took 12 s and more, and a
 * call waits at most 15 s for it (src/tools/math-runner.ts: "still loading … try again"; the
 * worker goes on loading), so a test whose first `math` call also started the worker would fail
 * with the machine's speed. Tests of what `math` does wait for the worker's readiness here first (in the test, not in
 * a `beforeAll`, so that a worker that cannot start fails only the tests that need it); the core's
 * close stops the worker (`shutdownBackgroundProcesses` → `stopMath`), so such a file mocks
 * `stopMath` away and one started worker serves all its tests (it is unref'd: it does not keep the
 * test process alive):
 *
 *     vi.mock(import('../../src/tools/math-runner.js'), async (original) => ({
 *       ...(await original()),
 *       stopMath: async () => undefined,
 *     }));
 */
import { evaluateMath } from '../../src/tools/math-runner.js';
import { CHILD_START_MS } from './budgets.js';

/** How long one `math` call waits for a loading worker (math-runner.ts's STARTUP_WAIT_MS). */
const ONE_ATTEMPT_MS = 15_000;

/** The ceiling of {@link warmMathWorker}: its deadline plus the attempt begun just before it. */
export const WARM_MATH_MS = CHILD_START_MS + ONE_ATTEMPT_MS;

/**
 * Evaluate `1 + 1` until the worker answers, within {@link CHILD_START_MS}; the kept-warm worker
 * then serves the tests' calls (once warm, this returns at once). A retry waits on the same
 * worker, further along in its loading.
 */
export async function warmMathWorker(): Promise<void> {
  const deadline = Date.now() + CHILD_START_MS;
  for (;;) {
    const r = await evaluateMath('1 + 1', 1_000);
    if (r.ok) return;
    if (Date.now() > deadline) throw new Error(`the math worker did not start within ${CHILD_START_MS} ms: ${r.error}`);
  }
}
