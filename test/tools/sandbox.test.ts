/**
 * The shell sandbox: what a command run by `bash` can see of switchboard. With bubblewrap the
 * command gets its own PID namespace (no switchboard process in /proc), a clean environment,
 * the workspace writable and switchboard's files hidden; the checks read through base64 so the
 * redaction of tool output cannot be what hides the secrets. Without bubblewrap (`off`, or `auto`
 * where it cannot run) the command still gets a clean environment and the output is redacted.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { shutdownBackgroundProcesses } from '../../src/tools/background.js';
import { bashTool } from '../../src/tools/builtins/bash.js';
import { bashProcessesTool } from '../../src/tools/builtins/bash-processes.js';
import { bwrapWorks, probeBwrapInBackground, resetSandboxProbe, sandboxStatus } from '../../src/tools/sandbox.js';
import { skipped } from '../helpers/skips.js';
import { skipReason } from '../helpers/system-tools.js';
import { makeContext, type TestContext } from './context.js';

const ENV_SECRET = 'bot-environment-secret-Qw12Er34Ty56';
const API_TOKEN = 'plain-api-token-value-Zx81Cv92';
const LLM_KEY = 'llm-key-value-Mn45Bv67Lk89';
const DB_MARKER = 'conversation-row-marker-Pq71';

let dir: string;

/** A config file, a database file and a workspace, laid out as a user would; loaded from the file. */
function layout(name: string, options: { sandbox: string; workspaceIsData?: boolean }) {
  const base = path.join(dir, name);
  const data = path.join(base, 'data');
  const workspace = options.workspaceIsData ? data : path.join(base, 'ws');
  fs.mkdirSync(data, { recursive: true });
  fs.mkdirSync(workspace, { recursive: true });
  const db = path.join(data, 'switchboard.db');
  fs.writeFileSync(db, `SQLite format 3\0${DB_MARKER}`);
  const configFile = path.join(options.workspaceIsData ? data : base, 'switchboard.toml');
  fs.writeFileSync(
    configFile,
    [
      '[llm]',
      `api_key = "${LLM_KEY}"`,
      '[store]',
      `database_url = "${db}"`,
      '[workspace]',
      `root = "${workspace}"`,
      '[http]',
      `api_token = "${API_TOKEN}"`,
      '[tools.bash]',
      `sandbox = "${options.sandbox}"`,
      'env = { GREETING = "hello-from-config" }',
      '',
    ].join('\n'),
  );
  const config = loadConfig({ path: configFile, env: {} });
  return { base, data, workspace, db, configFile, config };
}

/** The decoded text of every base64 line in `output`. */
function decoded(output: string): string {
  return output
    .split('\n')
    .filter((l) => /^[A-Za-z0-9+/=]{4,}$/.test(l))
    .map((l) => Buffer.from(l, 'base64').toString('utf8'))
    .join('\n');
}

function expectNoSecret(text: string): void {
  for (const secret of [ENV_SECRET, API_TOKEN, LLM_KEY, DB_MARKER]) expect(text).not.toContain(secret);
}

let ctx: TestContext | undefined;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-sandbox-'));
  process.env.SB_TEST_BOT_TOKEN = ENV_SECRET;
});
afterEach(async () => {
  await shutdownBackgroundProcesses();
  await ctx?.close();
  ctx = undefined;
});
afterAll(() => {
  delete process.env.SB_TEST_BOT_TOKEN;
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

const noBwrap = skipReason('bwrap', 'the shell sandbox tests run commands in bubblewrap');

describe.skipIf(noBwrap !== undefined)(`bash in bubblewrap${skipped(noBwrap)}`, () => {
  it('is the mode in force', () => {
    const { config } = layout('mode', { sandbox: 'auto' });
    expect(sandboxStatus(config)).toMatchObject({ setting: 'auto', mode: 'bwrap' });
  });

  it('shows no switchboard process and none of its environment: /proc/$PPID/environ, /proc, env', async () => {
    const l = layout('proc', { sandbox: 'bwrap' });
    ctx = await makeContext({ loaded: l.config });
    const r = await ctx.run(bashTool, {
      command: [
        'base64 -w0 /proc/$PPID/environ; echo',
        'for p in /proc/[0-9]*; do base64 -w0 $p/environ 2>/dev/null; echo; done',
        'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done | base64 -w0; echo',
        'env | base64 -w0; echo',
      ].join('\n'),
    });
    expect(r.status).toBe('done');
    const seen = decoded(r.output);
    expectNoSecret(seen);
    expect(seen).not.toContain('SB_TEST_BOT_TOKEN');
    expect(seen).not.toMatch(/vitest/);
    // What the command does get: the clean environment and what tools.bash.env passes.
    expect(seen).toContain('GREETING=hello-from-config');
    expect(seen).toMatch(/^PATH=/m);
    expect(seen).toMatch(/^HOME=/m);
  });

  it('cannot read the database, the config file or the data folder; the workspace is writable, the rest read-only', async () => {
    const l = layout('files', { sandbox: 'bwrap' });
    fs.writeFileSync(path.join(l.workspace, 'notes.txt'), 'workspace file\n');
    ctx = await makeContext({ loaded: l.config });
    const r = await ctx.run(bashTool, {
      command: [
        `base64 -w0 ${l.db} 2>/dev/null; echo`,
        `base64 -w0 ${l.configFile} 2>/dev/null; echo`,
        `ls -A ${l.data} 2>/dev/null | base64 -w0; echo`,
        'cat notes.txt',
        'echo made > made.txt',
        `touch ${path.join(l.base, 'outside.txt')} 2>/dev/null`,
        'touch /usr/sb-sandbox-test 2>&1 | head -1',
        // Not even as root: no capability is left to unmount what hides them or remount.
        `umount ${l.data} 2>/dev/null; umount -l /tmp 2>/dev/null; mount -o remount,rw / 2>/dev/null`,
        `base64 -w0 ${l.db} 2>/dev/null; echo`,
        'grep CapEff /proc/self/status',
      ].join('\n'),
    });
    const seen = decoded(r.output);
    expectNoSecret(seen);
    expect(seen).not.toContain('switchboard.db');
    expect(r.output).toContain('workspace file');
    expect(r.output).toMatch(/Read-only file system/);
    expect(r.output).toMatch(/^CapEff:\s+0+$/m);
    expect(fs.readFileSync(path.join(l.workspace, 'made.txt'), 'utf8')).toBe('made\n');
    expect(fs.existsSync(path.join(l.base, 'outside.txt'))).toBe(false);
    expect(fs.existsSync('/usr/sb-sandbox-test')).toBe(false);
  });

  it('hides the database and config file even when the workspace is the data folder', async () => {
    const l = layout('same', { sandbox: 'bwrap', workspaceIsData: true });
    fs.writeFileSync(path.join(l.workspace, 'notes.txt'), 'workspace file\n');
    ctx = await makeContext({ loaded: l.config });
    const r = await ctx.run(bashTool, {
      command:
        'base64 -w0 switchboard.db; echo; base64 -w0 switchboard.toml; echo; cat notes.txt; echo new > new.txt; ls',
    });
    expectNoSecret(decoded(r.output));
    expect(r.output).toContain('workspace file');
    expect(fs.readFileSync(path.join(l.workspace, 'new.txt'), 'utf8')).toBe('new\n');
    // The real files are untouched.
    expect(fs.readFileSync(l.db, 'utf8')).toContain(DB_MARKER);
  });

  it('runs background processes in the sandbox too', async () => {
    const l = layout('bg', { sandbox: 'bwrap' });
    ctx = await makeContext({ loaded: l.config });
    const started = await ctx.run(bashTool, {
      command: "base64 -w0 /proc/$PPID/environ; echo; printf 'DO%s\\n' NE",
      background: true,
    });
    const id = /Started background process (bg\d+)/.exec(started.output)?.[1] as string;
    let out = await ctx.run(bashProcessesTool, { action: 'output', id });
    for (let i = 0; i < 200 && !out.output.includes('DONE'); i++) {
      await new Promise((r) => setTimeout(r, 25));
      out = await ctx.run(bashProcessesTool, { action: 'output', id });
    }
    expect(out.output).toContain('DONE');
    const seen = decoded(out.output);
    expect(seen).toContain('GREETING=hello-from-config');
    expectNoSecret(seen);
  });
});

describe('bash without bubblewrap (clean environment only)', () => {
  it('passes none of switchboard’s variables, and redacts its secrets from what the command prints', async () => {
    const l = layout('off', { sandbox: 'off' });
    expect(sandboxStatus(l.config)).toMatchObject({ setting: 'off', mode: 'env' });
    ctx = await makeContext({ loaded: l.config });
    const names = await ctx.run(bashTool, { command: 'env | cut -d= -f1 | sort' });
    const listed = names.output.split('\n');
    expect(listed).toEqual(expect.arrayContaining(['PATH', 'HOME', 'LANG', 'TERM', 'GREETING']));
    expect(listed).not.toContain('SB_TEST_BOT_TOKEN');
    // switchboard's config file is readable here, but every configured secret is redacted from
    // what reaches the model (the child-process test covers /proc/$PPID/environ).
    const r = await ctx.run(bashTool, { command: `cat ${l.configFile}` });
    expect(r.output).toContain('api_token = "[REDACTED]"');
    for (const secret of [API_TOKEN, LLM_KEY]) expect(r.output).not.toContain(secret);
  });

  it('the background probe (start-up) finds what the synchronous one finds, bubblewrap installed or not', async () => {
    const bin = path.join(dir, 'bin-for-probe');
    fs.mkdirSync(bin, { recursive: true });
    const savedPath = process.env.PATH;
    try {
      for (const PATH of [savedPath, bin]) {
        process.env.PATH = PATH;
        resetSandboxProbe();
        const sync = bwrapWorks();
        resetSandboxProbe();
        const background = await probeBwrapInBackground();
        expect(background).toEqual(sync);
        // and the synchronous probe answers from it afterwards
        expect(bwrapWorks()).toBe(background);
      }
      expect(bwrapWorks().detail).toBe('bubblewrap (bwrap) is not installed');
    } finally {
      process.env.PATH = savedPath;
      resetSandboxProbe();
    }
  });

  it('auto falls back to it where bubblewrap is missing; "bwrap" refuses commands with the reason', async () => {
    const bin = path.join(dir, 'bin-without-bwrap');
    fs.mkdirSync(bin, { recursive: true });
    for (const tool of ['bash', 'env', 'cut', 'sort', 'echo']) {
      const real = ['/usr/bin', '/bin'].map((d) => path.join(d, tool)).find((p) => fs.existsSync(p));
      if (real && !fs.existsSync(path.join(bin, tool))) fs.symlinkSync(real, path.join(bin, tool));
    }
    const savedPath = process.env.PATH;
    process.env.PATH = bin;
    resetSandboxProbe();
    try {
      const auto = layout('auto-missing', { sandbox: 'auto' });
      expect(sandboxStatus(auto.config)).toMatchObject({
        mode: 'env',
        detail: expect.stringContaining('bubblewrap (bwrap) is not installed'),
      });
      ctx = await makeContext({ loaded: auto.config });
      const ran = await ctx.run(bashTool, { command: 'echo ran' });
      expect(ran.output).toContain('ran');
      await ctx.close();
      const strict = layout('bwrap-missing', { sandbox: 'bwrap' });
      ctx = await makeContext({ loaded: strict.config });
      const refused = await ctx.run(bashTool, { command: 'echo ran' });
      expect(refused.status).toBe('failed');
      expect(refused.output).toBe(
        'refused: tools.bash.sandbox = "bwrap" but bubblewrap (bwrap) is not installed; shell commands are refused',
      );
      expect(ctx.audits).toHaveLength(0);
    } finally {
      process.env.PATH = savedPath;
      resetSandboxProbe();
    }
  });
});
