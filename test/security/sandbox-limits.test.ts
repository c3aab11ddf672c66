/**
 * What an approved command may consume (`tools.bash.max_*`), tried with bounded hogs while
 * another conversation's command must still get its answer: a command that tries to start 3 000
 * sleepers gets no more than its process limit, one that allocates 512 MiB is stopped at its
 * memory limit, a file is cut at the file size limit, a busy loop at its CPU time, and /tmp at the
 * memory limit. As root the processes and memory bind through a cgroup per command (RLIMIT_NPROC
 * does not bind root); as an unprivileged user, the way the Docker image runs, RLIMIT_NPROC in
 * the command's own user namespace binds — and the workspace stays writable there.
 */
import { spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { shutdownBackgroundProcesses } from '../../src/tools/background.js';
import { bashTool } from '../../src/tools/builtins/bash.js';
import { cgroupSupport } from '../../src/tools/cgroups.js';
import { limitPlan } from '../../src/tools/sandbox-limits.js';
import { skipped } from '../helpers/skips.js';
import { skipReason } from '../helpers/system-tools.js';
import { makeContext, type TestContext } from '../tools/context.js';

const NODE = process.execPath;
const contexts: TestContext[] = [];
async function context(conversationId: string, bash: Record<string, unknown>): Promise<TestContext> {
  const ctx = await makeContext({ conversationId, config: { tools: { bash } } });
  contexts.push(ctx);
  return ctx;
}
afterEach(async () => {
  await shutdownBackgroundProcesses();
  for (const ctx of contexts.splice(0)) await ctx.close();
});

/**
 * Tries to start 3 000 processes that sleep 3 s, prints how many started, holds them `holdS`
 * seconds. Perl (Debian's perl-base is always there): a failed fork returns at once, and the
 * parent is small, so each try is cheap.
 */
const SLEEPERS = (holdS: number) =>
  `perl -e 'my ($ok, $refused) = (0, 0); for (1..3000) { my $p = fork; if (!defined $p) { $refused++; next } if (!$p) { sleep 3; exit 0 } $ok++ } print "started $ok refused $refused\\n"; sleep ${holdS}'`;

/**
 * Holds 64 MiB, waits 3 s (so the other chat answers while it runs), then grows to 512 MiB in
 * 16 MiB strings, saying so at each 64 MiB. Perl, not the test's Node: a Node from the registry
 * (the Node 24 half of CI) lives in a folder the sandbox does not show.
 */
const ALLOCATE = `perl -e '$| = 1; my @held; for my $i (1..32) { push @held, "x" x (16 * 1024 * 1024); if ($i % 4 == 0) { print "holding ", $i * 16, " MiB\\n"; sleep 3 if $i == 4 } } print "allocated 512 MiB\\n"'`;

/** While `hog` runs `command`, another conversation's command answers; returns the hog's result. */
async function whileOtherChatAnswers(hog: TestContext, command: string) {
  const other = await context(`other-${hog.conversationId}`, {});
  let hogDone = 0;
  const hogRun = hog.run(bashTool, { command, timeout: 60 }).then((r) => {
    hogDone = Date.now();
    return r;
  });
  await new Promise((r) => setTimeout(r, 700));
  const answer = await other.run(bashTool, { command: 'echo the other chat got its answer' });
  const answered = Date.now();
  const result = await hogRun;
  expect(answer.status).toBe('done');
  expect(answer.output).toContain('the other chat got its answer');
  // …while the hog still ran.
  expect(answered).toBeLessThan(hogDone);
  return result;
}

const noBwrap = skipReason('bwrap', 'the limits are set in the shell sandbox');

describe.skipIf(noBwrap !== undefined)(`limits on what a command may consume${skipped(noBwrap)}`, () => {
  it('a command starting 3 000 sleepers gets its process limit, and another chat still gets its answer', async () => {
    const hog = await context('hog-pids', { max_processes: 64 });
    const plan = limitPlan(hog.config, true);
    expect(plan.unbound).toEqual([]);
    const result = await whileOtherChatAnswers(hog, `${SLEEPERS(2)}`);
    const m = /started (\d+) refused (\d+)/.exec(result.output);
    expect(m, result.output).not.toBeNull();
    // The sandbox's init, bash and perl take part of the 64.
    expect(Number(m?.[1])).toBeLessThanOrEqual(64);
    expect(Number(m?.[2])).toBeGreaterThanOrEqual(3000 - 64);
    if (cgroupSupport().pids) expect(result.output).toMatch(/\[the process limit \(64\) refused \d+ new processes\]/);
  }, 60_000);

  it('a command allocating 512 MiB is stopped at its memory limit, and another chat still gets its answer', async () => {
    const hog = await context('hog-memory', { max_memory_mb: 128 });
    const result = await whileOtherChatAnswers(hog, ALLOCATE);
    expect(result.output).not.toContain('allocated 512 MiB');
    expect(result.status).toBe('failed');
    if (cgroupSupport().memory) {
      expect(result.output).toMatch(/\[the memory limit \(128 MiB\) killed \d+ process/);
      // Stopped on its way there (at most 128 MiB held), not before it started.
      expect(result.output).toContain('holding 64 MiB');
      expect(result.output).not.toContain('holding 192 MiB');
    }
  }, 60_000);

  it('a file is cut at the file size limit', async () => {
    const ctx = await context('hog-file', { max_file_size_mb: 8 });
    const r = await ctx.run(bashTool, { command: 'head -c 20M /dev/zero > big.bin; echo "head exit $?"' });
    expect(r.output).toMatch(/File size limit exceeded/);
    expect(r.output).toMatch(/head exit 153/);
    expect(statSync(path.join(ctx.workspace, 'big.bin')).size).toBe(8 * 1024 * 1024);
  });

  it('a busy loop is stopped at its CPU time', async () => {
    const ctx = await context('hog-cpu', { max_cpu_seconds: 1 });
    const started = Date.now();
    const r = await ctx.run(bashTool, { command: 'bash -c \'while :; do :; done\'; echo "loop exit $?"', timeout: 60 });
    // SIGXCPU at the limit (exit 152), SIGKILL at once after it where soft and hard are the same.
    expect(r.output).toMatch(/loop exit (152|137)/);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('/tmp and the home folder hold no more than the memory limit', async () => {
    const ctx = await context('hog-tmp', { max_memory_mb: 64, max_file_size_mb: 0 });
    const r = await ctx.run(bashTool, {
      command:
        'head -c 100M /dev/zero > /tmp/fill; echo "tmp exit $?"; head -c 100M /dev/zero > ~/fill; echo "home exit $?"',
    });
    // Either the tmpfs is full at the limit, or (with a memory cgroup, which tmpfs pages count
    // in) the command is killed there.
    expect(r.output).not.toMatch(/(tmp|home) exit 0/);
    if (cgroupSupport().memory)
      expect(r.output).toMatch(/No space left on device|\[the memory limit \(64 MiB\) killed/);
    else
      expect(r.output).toMatch(
        /No space left on device[\s\S]*tmp exit 1[\s\S]*No space left on device[\s\S]*home exit 1/,
      );
  });
});

const notRoot =
  process.getuid?.() !== 0 ? 'this process is not root: the tests above already run as a user' : undefined;

describe.skipIf(noBwrap !== undefined || notRoot !== undefined)(
  `limits as an unprivileged user, as the Docker image runs${skipped(noBwrap ?? notRoot)}`,
  () => {
    it('RLIMIT_NPROC binds in the command’s own user namespace, and the workspace stays writable', async () => {
      const ws = mkdtempSync(path.join(os.tmpdir(), 'sb-limits-user-'));
      chownSync(ws, 65534, 65534);
      try {
        const child = spawn(
          NODE,
          [
            path.join(import.meta.dirname, 'run-command.mjs'),
            ws,
            'none',
            '64',
            `id -u; echo written > made.txt && cat made.txt; ${SLEEPERS(1)}`,
          ],
          { uid: 65534, gid: 65534, env: { PATH: process.env.PATH, HOME: ws }, cwd: ws },
        );
        let out = '';
        child.stdout.on('data', (c) => {
          out += c;
        });
        child.stderr.on('data', (c) => {
          out += c;
        });
        await new Promise((r) => child.on('exit', r));
        const line = out.trim().split('\n').at(-1) ?? '';
        const result = JSON.parse(line) as { uid: number; layers: string[]; output: string };
        expect(result.uid).toBe(65534);
        expect(result.layers).toContain("64 processes (RLIMIT_NPROC in the command's user namespace)");
        expect(result.output).toMatch(/^65534$/m);
        expect(result.output).toContain('written');
        expect(statSync(path.join(ws, 'made.txt')).uid).toBe(65534);
        const m = /started (\d+) refused (\d+)/.exec(result.output);
        expect(m, result.output).not.toBeNull();
        expect(Number(m?.[1])).toBeLessThanOrEqual(64);
      } finally {
        rmSync(ws, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
      }
    }, 60_000);
  },
);
