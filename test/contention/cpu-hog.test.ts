/**
 * The contention suite's CPU hog (test/contention/cpu-hog.ts): its spinners really use the CPU,
 * and none outlives its bound, its `stop()` or its parent.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/harness.js';
import { startCpuHog } from './cpu-hog.js';

/** CPU time (user + system, clock ticks) a process has used; undefined once it is gone or a zombie. */
function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

const alive = (pid: number) => cpuTicks(pid) !== undefined;

describe('the CPU hog', () => {
  it('spins until stopped, then is gone', async () => {
    const hog = startCpuHog(1, Date.now() + 60_000);
    const [pid] = hog.pids as [number];
    try {
      // Half a second of CPU: it computes, not sleeps (a tick is 10 ms).
      await waitFor(() => (cpuTicks(pid) ?? 0) >= 50, 'the spinner to use CPU time');
    } finally {
      await hog.stop();
    }
    expect(alive(pid)).toBe(false);
  });

  it('ends on its own at its bound', async () => {
    const hog = startCpuHog(1, Date.now() + 300);
    const [pid] = hog.pids as [number];
    try {
      await waitFor(() => !alive(pid), 'the spinner to end at its bound');
    } finally {
      await hog.stop();
    }
  });

  it('ends when its parent dies without stopping it', async () => {
    // A parent that starts a spinner, prints its pid and waits; SIGKILL leaves it no time to clean up.
    const parent = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `const { startCpuHog } = await import(${JSON.stringify(path.join(import.meta.dirname, 'cpu-hog.ts'))});
         console.log(startCpuHog(1, Date.now() + 60_000).pids[0]);
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => parent.once('exit', resolve));
    const line = await new Promise<string>((resolve) =>
      createInterface({ input: parent.stdout as NonNullable<typeof parent.stdout> }).once('line', resolve),
    );
    const pid = Number(line);
    try {
      expect(alive(pid)).toBe(true);
      parent.kill('SIGKILL');
      await exited;
      await waitFor(() => !alive(pid), 'the orphaned spinner to end');
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
      if (parent.exitCode === null && parent.signalCode === null) parent.kill('SIGKILL');
    }
  });
});
