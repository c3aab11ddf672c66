/**
 * A CPU hog for the contention suite: one child process per core, each spinning at the same
 * priority as the tests (they inherit this process's nice value and cgroup), so the scheduler
 * shares every core between the hog and the switchboard processes under test.
 *
 * Each spinner ends on its own at its deadline, and as soon as its parent is gone (it checks
 * between slices of spinning): a runner killed by SIGKILL leaves nothing spinning behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';

/**
 * The spinner, run with `node -e`: busy for 20 ms slices; between slices it yields to its own
 * event loop and exits when the deadline (argv[1], epoch ms) has passed or its parent is no longer
 * the process that started it (argv[2]: given, not read at start, since the parent may already be
 * gone by the time a starved spinner runs its first line).
 */
const SPINNER = `
const until = Number(process.argv[1]);
const parent = Number(process.argv[2]);
let sink = 0;
function slice() {
  const end = Date.now() + 20;
  while (Date.now() < end) sink = (sink * 31 + 7) % 1000003;
  if (Date.now() >= until || process.ppid !== parent) process.exit(0);
  setImmediate(slice);
}
slice();
`;

/** Running spinners. */
export interface CpuHog {
  /** The spinners' process ids. */
  pids: number[];
  /** SIGKILL every spinner still running and wait until each has exited. */
  stop(): Promise<void>;
}

/** Starts `count` spinners that run until `stop()`, their parent's death or `untilMs` (epoch ms), whichever comes first. */
export function startCpuHog(count: number, untilMs: number): CpuHog {
  const children: ChildProcess[] = [];
  const exits: Array<Promise<void>> = [];
  for (let i = 0; i < count; i++) {
    const child = spawn(process.execPath, ['-e', SPINNER, String(untilMs), String(process.pid)], { stdio: 'ignore' });
    children.push(child);
    exits.push(
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        else child.once('exit', () => resolve());
      }),
    );
  }
  return {
    pids: children.map((c) => c.pid ?? 0),
    async stop() {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await Promise.all(exits);
    },
  };
}
