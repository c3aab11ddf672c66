/**
 * `npm run test:contention`: the kill tests and the multi-instance tests, run while a CPU hog
 * keeps every core busy at the tests' own priority. Their guarantees (each answer shown once,
 * streams finished, cards settled, leases held by the living) must not depend on how fast a
 * process gets the CPU.
 *
 *   node --import tsx test/contention/run.ts [files…] [vitest options…]
 *
 * The store is the suite's: SQLite, or PostgreSQL with SWITCHBOARD_TEST_DATABASE_URL (the
 * multi-instance files run only there). Files given run instead of the suite's (one at a time
 * while looking into a failure); options (`--name=value`) go to vitest (`.ci/run` adds its
 * reporters). Exits with vitest's status (1 when vitest was ended by a signal). The hog is
 * stopped when vitest ends, when this runner is interrupted (SIGINT, SIGTERM, SIGHUP), and in
 * any case after CONTENTION_MAX_SECONDS (default 600); the spinners also end on their own when
 * this runner dies.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { startCpuHog } from './cpu-hog.js';

/** The test files of the suite. */
export const CONTENTION_FILES = [
  'test/delivery/kill-telegram.test.ts',
  'test/delivery/kill-slack.test.ts',
  'test/scale/multi-instance.test.ts',
  'test/scale/streams.test.ts',
  'test/scale/instances.test.ts',
];

const ROOT = path.resolve(import.meta.dirname, '../..');
const VITEST = path.join(ROOT, 'node_modules/vitest/vitest.mjs');

/** Spinners per core (CONTENTION_HOGS_PER_CORE, default 1: every core is always contended). */
const perCore = Number(process.env.CONTENTION_HOGS_PER_CORE ?? 1);
const maxSeconds = Number(process.env.CONTENTION_MAX_SECONDS ?? 600);
const spinners = Math.max(1, Math.round(os.availableParallelism() * perCore));

const hog = startCpuHog(spinners, Date.now() + maxSeconds * 1000);
const store = process.env.SWITCHBOARD_TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite';
console.log(
  `=== contention: ${spinners} CPU spinner(s) on ${os.availableParallelism()} core(s), at most ${maxSeconds} s; store ${store}`,
);
const started = Date.now();
const hogBound = setTimeout(() => {
  console.log(`=== contention: the CPU hog stopped at its ${maxSeconds} s bound; the rest runs without it`);
  void hog.stop();
}, maxSeconds * 1000);

const args = process.argv.slice(2);
const files = args.filter((a) => !a.startsWith('-'));
const options = args.filter((a) => a.startsWith('-'));
const vitest = spawn(process.execPath, [VITEST, 'run', ...(files.length ? files : CONTENTION_FILES), ...options], {
  cwd: ROOT,
  stdio: 'inherit',
});

// Interrupted: pass the signal on to vitest (it stops its workers and the tests' children), then
// end as it ends. The hog goes at once: vitest's shutdown should not compete with it.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    void hog.stop();
    if (vitest.exitCode === null && vitest.signalCode === null) vitest.kill(signal);
  });
}

const status = await new Promise<number>((resolve) => {
  vitest.once('exit', (code) => resolve(code ?? 1));
  vitest.once('error', (err) => {
    console.error(`contention: vitest did not start: ${err.message}`);
    resolve(1);
  });
});
clearTimeout(hogBound);
await hog.stop();
console.log(
  `=== contention: vitest exited ${status} after ${Math.round((Date.now() - started) / 1000)} s under the hog`,
);
process.exit(status);
