/** Which lease holders count as dead processes of this host (their leases are taken at once). */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { isDeadLocalHolder, newHolderId } from '../../src/core/leases.js';
import { skipped } from '../helpers/skips.js';

/** `/proc/<pid>/stat` (state, start time) is Linux's; elsewhere only kill(pid, 0) is asked. */
const notLinux = process.platform === 'linux' ? undefined : 'needs /proc/<pid>/stat, which only Linux has';

describe('isDeadLocalHolder', () => {
  it('a live process of this host is alive; another host is never judged', () => {
    const ppid = process.ppid;
    expect(isDeadLocalHolder(`${os.hostname()}:${ppid}:abcdef`)).toBe(false);
    expect(isDeadLocalHolder(`not-${os.hostname()}:999999999:abcdef`)).toBe(false);
    expect(isDeadLocalHolder(`${os.hostname()}:999999999:abcdef`)).toBe(true);
  });

  it.skipIf(notLinux !== undefined)(
    `a holder id carries the start time: a later process with the same pid is not the holder${skipped(notLinux)}`,
    () => {
      const own = newHolderId();
      const parts = own.split(':');
      expect(parts).toHaveLength(4);
      const stat = readFileSync(`/proc/${process.ppid}/stat`, 'utf8');
      const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      expect(isDeadLocalHolder(`${os.hostname()}:${process.ppid}:abcdef:${start}`)).toBe(false);
      expect(isDeadLocalHolder(`${os.hostname()}:${process.ppid}:abcdef:${Number(start) - 1}`)).toBe(true);
    },
  );

  it.skipIf(notLinux !== undefined)(
    `a killed process its parent has not reaped yet (a zombie) is dead${skipped(notLinux)}`,
    async () => {
      // `sh` execs into `sleep`, which never waits for the background `sleep`: killed, it stays a zombie.
      const parent = spawn('sh', ['-c', 'sleep 60 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
      try {
        const pid = await new Promise<number>((resolve) =>
          parent.stdout.once('data', (d) => resolve(Number(String(d).trim()))),
        );
        const holder = `${os.hostname()}:${pid}:abcdef`;
        expect(isDeadLocalHolder(holder)).toBe(false);
        // Until `sh` has become `sleep`, the shell may still reap its child (no zombie then).
        const comm = () => readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim();
        for (let i = 0; i < 500 && comm() !== 'sleep'; i++) await new Promise((r) => setTimeout(r, 20));
        expect(comm()).toBe('sleep');
        process.kill(pid, 'SIGKILL');
        for (let i = 0; i < 100 && !isDeadLocalHolder(holder); i++) await new Promise((r) => setTimeout(r, 20));
        // Still there for kill(pid, 0): a zombie.
        expect(() => process.kill(pid, 0)).not.toThrow();
        expect(isDeadLocalHolder(holder)).toBe(true);
      } finally {
        parent.kill('SIGKILL');
      }
    },
  );
});
