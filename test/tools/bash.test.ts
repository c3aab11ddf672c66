import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shutdownBackgroundProcesses } from '../../src/tools/background.js';
import { bashTool } from '../../src/tools/builtins/bash.js';
import { blockedReason } from '../../src/tools/builtins/bash-guard.js';
import { bashProcessesTool } from '../../src/tools/builtins/bash-processes.js';
import { groupAlive } from '../../src/tools/processes.js';
import { redactSecrets } from '../../src/tools/redact.js';
import { sandboxStatus } from '../../src/tools/sandbox.js';
import { livePidsWith, makeContext, type TestContext } from './context.js';

let ctx: TestContext;
beforeEach(async () => {
  ctx = await makeContext({ config: { llm: { api_key: 'literal-config-key-123456' } } });
});
afterEach(async () => {
  await ctx.close();
});
afterAll(async () => {
  await shutdownBackgroundProcesses();
});

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('bash', () => {
  it('runs a command in the workspace, streams lines and audits', async () => {
    fs.writeFileSync(path.join(ctx.workspace, 'f.txt'), 'x');
    const r = await ctx.run(bashTool, { command: 'echo one; ls; echo two >&2' });
    expect(r.status).toBe('done');
    expect(r.output).toContain('one');
    expect(r.output).toContain('f.txt');
    expect(r.output).toContain('two');
    expect(r.output).toMatch(/\[exit status 0, [\d.]+ s\]$/);
    // Streamed line by line.
    expect(ctx.outputs).toContain('one');
    expect(ctx.outputs).toContain('two');
    const audit = ctx.audits.find((a) => a.kind === 'shell_exec');
    expect(audit?.data).toMatchObject({
      command: 'echo one; ls; echo two >&2',
      workdir: '.',
      exit_code: 0,
      timed_out: false,
      background: false,
    });
    expect(typeof audit?.data.pid).toBe('number');
  });

  it('reports a non-zero exit as failed, with its output', async () => {
    const r = await ctx.run(bashTool, { command: 'echo oops; exit 3' });
    expect(r.status).toBe('failed');
    expect(r.output).toContain('oops\n[exit status 3');
  });

  it('kills the whole process group when the timeout passes', async () => {
    // Distinct sleep lengths name the processes so they can be found from outside the sandbox.
    const r = await ctx.run(bashTool, {
      command: `sleep 61.1 & echo started; (trap '' TERM; sleep 61.2) & sleep 61.3`,
      timeout: 1,
    });
    expect(r.status).toBe('failed');
    expect(r.output).toContain('started');
    expect(r.output).toContain('[timed out after 1 s; the process group was killed]');
    await until(() => ['61.1', '61.2', '61.3'].every((t) => livePidsWith(t).length === 0));
    const audit = ctx.audits.find((a) => a.kind === 'shell_exec');
    expect(audit?.data.timed_out).toBe(true);
    expect(groupAlive(audit?.data.pid as number)).toBe(false);
  });

  it('stops processes a finished command left behind in its group', async () => {
    const r = await ctx.run(bashTool, { command: `sleep 62.1 > /dev/null 2>&1 & echo done` });
    expect(r.status).toBe('done');
    await until(() => livePidsWith('62.1').length === 0);
    // In bubblewrap the kernel ends them with the sandbox's PID namespace, before the check.
    if (sandboxStatus(ctx.config).mode === 'env')
      expect(r.output).toContain('processes the command left running were stopped');
  });

  it('stops when the turn is stopped', async () => {
    setTimeout(() => ctx.abort.abort(), 300);
    const r = await ctx.run(bashTool, { command: 'sleep 30' });
    expect(r.status).toBe('failed');
    expect(r.output).toContain('process group was killed');
  });

  it('caps 5 MB of output to head and tail with a notice, in bounded events', async () => {
    const r = await ctx.run(bashTool, {
      command:
        'yes "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz" | head -c 5000000; echo; echo LAST-LINE',
    });
    expect(r.status).toBe('done');
    expect(r.output.length).toBeLessThan(110_000);
    expect(r.output).toMatch(/\[\.\.\. \d+ bytes of output omitted; 50000\d\d bytes in all \.\.\.\]/);
    expect(r.output.startsWith('0123456789')).toBe(true);
    expect(r.output).toContain('LAST-LINE\n[exit status 0');
    const streamedBytes = ctx.outputs.reduce((n, s) => n + s.length, 0);
    expect(streamedBytes).toBeLessThan(250_000);
    expect(ctx.outputs.at(-1)).toContain('live output stopped');
  });

  it('redacts secrets in results and streamed output', async () => {
    const key = `sk-proj-${'A1b2C3d4'.repeat(4)}`;
    const r = await ctx.run(bashTool, {
      command: `echo "key=${key}"; echo "-----BEGIN RSA PRIVATE KEY-----"; echo MIIEabc; echo "-----END RSA PRIVATE KEY-----"; echo literal-config-key-123456; echo fine`,
    });
    expect(r.output).not.toContain(key);
    expect(r.output).not.toContain('MIIEabc');
    expect(r.output).not.toContain('literal-config-key-123456');
    expect(r.output).toContain('fine');
    const streamed = ctx.outputs.join('\n');
    expect(streamed).not.toContain(key);
    expect(streamed).not.toContain('MIIEabc');
    expect(streamed).toContain('[REDACTED]');
  });

  it('does not pass switchboard credentials to commands', async () => {
    process.env.SB_TEST_API_KEY = 'should-not-leak';
    try {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, not a template
      const r = await ctx.run(bashTool, { command: 'echo "v=${SB_TEST_API_KEY:-unset}"' });
      expect(r.output).toContain('v=unset');
    } finally {
      delete process.env.SB_TEST_API_KEY;
    }
  });

  it('refuses blocklisted commands and workdirs outside the workspace', async () => {
    for (const c of [
      'rm -rf /',
      'sudo rm -rf --no-preserve-root /',
      'rm -fr ~',
      ':(){ :|:& };:',
      'mkfs.ext4 /dev/sda1',
      'dd if=/dev/zero of=/dev/sda',
      'echo; shutdown -h now',
    ]) {
      const r = await ctx.run(bashTool, { command: c });
      expect(r.status, c).toBe('failed');
      expect(r.output, c).toContain('blocklist');
    }
    expect(blockedReason('rm -rf ./build')).toBeNull();
    expect(blockedReason('git log --grep reboot')).toBeNull();
    const r = await ctx.run(bashTool, { command: 'pwd', workdir: '..' });
    expect(r.status).toBe('failed');
    expect(r.output).toContain('outside');
    expect(ctx.audits).toHaveLength(0);
  });

  it('runs in the background; lists, reads and stops it; shutdown reaps the rest', async () => {
    const r = await ctx.run(bashTool, { command: 'echo started; sleep 60', background: true });
    expect(r.output).toMatch(/Started background process (bg\d+) \(pid (\d+)\)/);
    const [, id, pidText] = /Started background process (bg\d+) \(pid (\d+)\)/.exec(r.output)!;
    const pid = Number(pidText);
    let list = await ctx.run(bashProcessesTool, { action: 'list' });
    expect(list.output).toContain(`${id}  pid ${pid}  running`);
    let out = await ctx.run(bashProcessesTool, { action: 'output', id });
    for (let i = 0; i < 100 && !out.output.includes('started'); i++) {
      await new Promise((res) => setTimeout(res, 20));
      out = await ctx.run(bashProcessesTool, { action: 'output', id });
    }
    expect(out.output).toContain('started');
    const stop = await ctx.run(bashProcessesTool, { action: 'stop', id });
    expect(stop.output).toContain(`Stopped ${id}`);
    expect(groupAlive(pid)).toBe(false);
    list = await ctx.run(bashProcessesTool, { action: 'list' });
    expect(list.output).toContain(`${id}  pid ${pid}  stopped`);

    const second = await ctx.run(bashTool, { command: 'sleep 60', background: true });
    const pid2 = Number(/pid (\d+)/.exec(second.output)![1]);
    expect(groupAlive(pid2)).toBe(true);
    await shutdownBackgroundProcesses();
    expect(groupAlive(pid2)).toBe(false);
    const missing = await ctx.run(bashProcessesTool, { action: 'stop', id: 'bg999' });
    expect(missing.status).toBe('failed');
    const kinds = ctx.audits.filter((a) => a.kind === 'shell_exec').map((a) => a.data.state);
    expect(kinds).toContain('started');
    await until(() => ctx.audits.some((a) => a.data.state === 'finished'));
  });
});

describe('redactSecrets', () => {
  it('hides known shapes and keeps ordinary text', () => {
    const text = [
      'ghp_' + 'a'.repeat(36),
      'xoxb-123456789012-abcdefghijkl',
      'AKIAABCDEFGHIJKLMNOP',
      '123456789:AA' + 'b'.repeat(33),
      'Authorization: Bearer abcdefghijklmnopqrstuvwxyz',
      'password=hunter2hunter2',
      'the quick brown fox',
    ].join('\n');
    const out = redactSecrets(text);
    expect(out).not.toMatch(/ghp_a|xoxb-1|AKIAAB|:AAbbb|abcdefghijklmnopqrstuvwxyz|hunter2/);
    expect(out).toContain('Authorization: Bearer [REDACTED]');
    expect(out).toContain('the quick brown fox');
  });
});
