/**
 * `switchboard doctor` catches what `start` would hit, and changes nothing: a fresh database is
 * not migrated (what `migrate` would apply is listed), a port in use, a refused Slack app token,
 * a Telegram user list that is not ids; and each failure names the host or file and the cause.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, migrationNames, pendingMigrations } from '../../src/store/db.js';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { type SlackEmulator, startSlackEmulator } from '../emulators/slack.js';
import { budget, CHILD_START_MS, times } from '../helpers/budgets.js';
import { childEnv, killLeftRunning, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { hasSystemTool } from '../helpers/system-tools.js';
import { openTestDatabase, testDatabaseUrl, testPostgresUrl } from '../helpers/test-db.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');
let llm: ScriptedLlm;
let slack: SlackEmulator;
let dir: string;
let n = 0;
const procs: StartedProcess[] = [];

beforeAll(async () => {
  llm = await startScriptedLlm();
  slack = await startSlackEmulator();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-doctor-'));
  mkdirSync(path.join(dir, 'ws'));
});
afterAll(async () => {
  await killLeftRunning(procs);
  await slack.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** Run the doctor as a child (async: the emulators in this process answer it). */
async function doctor(extra: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: testDatabaseUrl(dir, `d${++n}`),
    SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
    OPENAI_BASE_URL: llm.url,
    SWITCHBOARD_MODEL: 'test-model',
    SWITCHBOARD_HTTP_PORT: '0',
    LOG_LEVEL: 'silent',
    ...extra,
  };
  // A run is a child's start and a few checks: ended (code null) if it outlasts a start's budget.
  const child = spawn(process.execPath, [BIN, 'doctor'], { env, timeout: CHILD_START_MS });
  let out = '';
  child.stdout.on('data', (c) => {
    out += c;
  });
  child.stderr.on('data', (c) => {
    out += c;
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, out };
}

/**
 * The timeout of a test that runs `n` child processes (doctor runs, a `switchboard start`): the
 * sum of their ceilings, each a child's start ({@link CHILD_START_MS}), not the suite's 20 s
 * default that two or three runs exceed on a loaded machine.
 */
const runs = (n: number) => ({ timeout: budget(...times(n, CHILD_START_MS)) });

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe('switchboard doctor', () => {
  // Three doctor runs.
  it(
    'does not migrate a fresh database: it says what `migrate` would apply, and applies nothing',
    runs(3),
    async () => {
      const all = await migrationNames();
      if (!testPostgresUrl) {
        // A SQLite file that does not exist is not even created.
        const file = path.join(dir, 'fresh', 'new.db');
        const ws = path.join(dir, 'fresh', 'ws');
        const r = await doctor({ DATABASE_URL: `sqlite:${file}`, SWITCHBOARD_WORKSPACE: ws });
        expect(r.out).toContain(
          `ok    database: ${file} does not exist yet: \`switchboard migrate\` (or start) creates it and applies ${all.length} migrations\n`,
        );
        expect(r.out).toContain(`ok    workspace: ${ws} does not exist yet; start creates it\n`);
        expect(existsSync(file)).toBe(false);
        expect(existsSync(path.join(dir, 'fresh'))).toBe(false); // neither folder was made
      }
      const url = testDatabaseUrl(dir, 'empty');
      const db = openTestDatabase(dir, 'empty'); // SQLite: the file exists now, with no table
      try {
        const r = await doctor({ DATABASE_URL: url });
        expect(r.out).toMatch(
          new RegExp(
            `^ok +database: .*: ${all.length} migrations to apply; \`switchboard migrate\` \\(or start\\) applies them: ${all[0]}, `,
            'm',
          ),
        );
        expect(r.code).toBe(0);
        expect(await pendingMigrations(db)).toEqual(all); // nothing was applied
        await migrateToLatest(db);
        const after = await doctor({ DATABASE_URL: url });
        expect(after.out).toMatch(/^ok +database: .* \(up to date\)$/m);
      } finally {
        await db.destroy();
      }
    },
  );

  // A run on the taken port, one on the freed port and up to four on fresh ones.
  it('fails when the HTTP port is already in use, naming the port and what to change', runs(6), async () => {
    // A process that is not switchboard: it hangs up on doctor's question (and its close is not held open).
    const taken = net.createServer((c) => c.destroy()).listen(0, '127.0.0.1');
    await new Promise((r) => taken.once('listening', r));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const r = await doctor({ SWITCHBOARD_HTTP_PORT: String(port), SWITCHBOARD__HTTP__HOST: '127.0.0.1' });
      expect(r.out).toContain(
        `FAIL  http port: port ${port} on 127.0.0.1 is already in use by another process (start would fail with EADDRINUSE): stop that process or set http.port / SWITCHBOARD_HTTP_PORT\n`,
      );
      expect(r.code).toBe(1);
    } finally {
      await new Promise((r) => taken.close(r));
    }
    // Free again. Another process on this machine (CI runs suites side by side) may take a port
    // the moment it is free: then doctor says so, and a fresh free port is tried.
    let free = await doctor({ SWITCHBOARD_HTTP_PORT: String(port), SWITCHBOARD__HTTP__HOST: '127.0.0.1' });
    let tried = port;
    for (let i = 0; i < 4 && !free.out.includes(`ok    http port: 127.0.0.1:${tried} is free\n`); i++) {
      expect(free.out).toContain(`FAIL  http port: port ${tried} on 127.0.0.1 is already in use`);
      tried = await freePort();
      free = await doctor({ SWITCHBOARD_HTTP_PORT: String(tried), SWITCHBOARD__HTTP__HOST: '127.0.0.1' });
    }
    expect(free.out).toContain(`ok    http port: 127.0.0.1:${tried} is free\n`);
    expect(free.code).toBe(0);
  });

  // A `switchboard start`, two doctor runs and the start's stop.
  it(
    'beside a running switchboard on the port: a note that it runs, not a failure; another HTTP server there still fails',
    runs(4),
    async () => {
      const instanceDir = mkdtempSync(path.join(dir, 'instance-'));
      const proc = await startProcess(
        childEnv(instanceDir, llm.url, '', { TELEGRAM_BOT_TOKEN: '', SLACK_BOT_TOKEN: '' }),
      );
      procs.push(proc);
      const port = Number(proc.logs.find((l) => l.msg === 'switchboard started')?.port);
      const beside = await doctor({ SWITCHBOARD_HTTP_PORT: String(port), SWITCHBOARD__HTTP__HOST: '127.0.0.1' });
      expect(beside.out).toContain(`ok    http port: switchboard is already running on 127.0.0.1:${port} (healthy)\n`);
      expect(beside.code).toBe(0);
      expect(await proc.stop()).toBe(0);

      // Something else that answers /healthz is not taken for switchboard.
      const other = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n'));
      other.listen(0, '127.0.0.1');
      await new Promise((r) => other.once('listening', r));
      const otherPort = (other.address() as net.AddressInfo).port;
      try {
        const r = await doctor({ SWITCHBOARD_HTTP_PORT: String(otherPort), SWITCHBOARD__HTTP__HOST: '127.0.0.1' });
        expect(r.out).toContain(`FAIL  http port: port ${otherPort} on 127.0.0.1 is already in use by another process`);
        expect(r.code).toBe(1);
      } finally {
        await new Promise((r) => other.close(r));
      }
    },
  );

  // Two doctor runs.
  it('checks the Slack app token with apps.connections.open, as Socket Mode does at start', runs(2), async () => {
    const slackEnv = {
      SLACK_BOT_TOKEN: 'xoxb-emulator',
      SLACK_API_URL: slack.apiUrl,
      SLACK_SIGNING_SECRET: slack.app.signingSecret,
    };
    const bad = await doctor({ ...slackEnv, SLACK_APP_TOKEN: 'xapp-wrong' });
    const host = new URL(slack.apiUrl).host;
    expect(bad.out).toMatch(/^ok +slack: bot /m); // the bot token is fine: auth.test alone would pass
    expect(bad.out).toContain(
      `FAIL  slack socket mode: ${host} refused apps.connections.open for the app token (SLACK_APP_TOKEN): invalid_auth (HTTP 200) — Socket Mode would not connect`,
    );
    expect(bad.code).toBe(1);
    const good = await doctor({ ...slackEnv, SLACK_APP_TOKEN: 'xapp-emulator' });
    expect(good.out).toContain('ok    slack socket mode: Socket Mode: the app token opens a connection\n');
    expect(good.code).toBe(0);
  });

  // Three doctor runs.
  it(
    'says which way Slack replies stream: native, chat.update by setting, or chat.update because the server refuses streams',
    runs(3),
    async () => {
      const slackEnv = {
        SLACK_BOT_TOKEN: 'xoxb-emulator',
        SLACK_API_URL: slack.apiUrl,
        SLACK_SIGNING_SECRET: slack.app.signingSecret,
      };
      const native = await doctor(slackEnv);
      expect(native.out).toContain('ok    slack streaming: replies stream natively in threads (chat.startStream)');
      const update = await doctor({ ...slackEnv, SWITCHBOARD__SLACK__STREAMING: 'update' });
      expect(update.out).toContain(
        'ok    slack streaming: replies stream by chat.update (slack.streaming = "update")\n',
      );
      slack.streams.refuse = true;
      try {
        const refused = await doctor(slackEnv);
        expect(refused.out).toContain(
          `ok    slack streaming: replies stream by chat.update: ${new URL(slack.apiUrl).host} does not know chat.appendStream`,
        );
        expect(refused.code).toBe(0);
      } finally {
        slack.streams.refuse = false;
      }
    },
  );

  // One doctor run.
  it('refuses Telegram allowed users that are not numeric ids', runs(1), async () => {
    const r = await doctor({ TELEGRAM_ALLOWED_USERS: '12345,@alice' });
    expect(r.out).toContain(
      'FAIL  config: telegram.allowed_users.1 (env TELEGRAM_ALLOWED_USERS): "@alice" is not a numeric Telegram user id (the bot sees only numeric ids, not @usernames)\n',
    );
    expect(r.code).toBe(2);
  });

  // One doctor run.
  it('names the host and the cause when a platform or the model cannot be reached', runs(1), async () => {
    const port = await closedPort();
    const r = await doctor({
      OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
      TELEGRAM_BOT_TOKEN: '1:x',
      TELEGRAM_API_ROOT: `http://127.0.0.1:${port}`,
      SLACK_BOT_TOKEN: 'xoxb-1',
      SLACK_SIGNING_SECRET: 's',
      SLACK_API_URL: 'http://no-such-host.invalid/api/',
    });
    expect(r.out).toContain(
      `FAIL  model endpoint: cannot reach the model endpoint at http://127.0.0.1:${port}/v1: connection refused (nothing listens on that port) (ECONNREFUSED)`,
    );
    expect(r.out).toContain(
      `FAIL  telegram: cannot reach 127.0.0.1:${port}: connection refused (nothing listens on that port) (ECONNREFUSED)\n`,
    );
    expect(r.out).toMatch(
      /^FAIL +slack: cannot reach no-such-host\.invalid: host name (not found \(DNS\) \(ENOTFOUND\)|lookup failed \(DNS or no network\) \(EAI_AGAIN\))$/m,
    );
    expect(r.out).not.toContain('fetch failed');
    expect(r.out).not.toContain('[object Object]');
  });

  // One doctor run.
  it('shows a refusal that is not a string as JSON, never [object Object]', runs(1), async () => {
    const server = (await import('node:http')).createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: false, error: { code: 'weird', detail: 'proxy said no' } }));
    });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const r = await doctor({
        SLACK_BOT_TOKEN: 'xoxb-1',
        SLACK_SIGNING_SECRET: 's',
        SLACK_API_URL: `http://127.0.0.1:${port}/api/`,
      });
      expect(r.out).toContain(
        `FAIL  slack: 127.0.0.1:${port} refused auth.test for the bot token (SLACK_BOT_TOKEN): {"code":"weird","detail":"proxy said no"} (HTTP 200)\n`,
      );
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  // Two doctor runs.
  it('reports the shell network and how the limits bind; "host" is a warning', runs(2), async () => {
    const r = await doctor({});
    expect(r.out).toMatch(/^(ok {2}|warn) {2}shell limits: .+$/m);
    if (hasSystemTool('bwrap') && hasSystemTool('slirp4netns'))
      expect(r.out).toContain('ok    shell network: egress: own network namespace per conversation');
    const host = await doctor({ SWITCHBOARD__TOOLS__BASH__NETWORK: 'host' });
    if (hasSystemTool('bwrap'))
      expect(host.out).toContain(
        'warn  shell network: host (tools.bash.network): commands reach everything the host reaches, services on its 127.0.0.1',
      );
    expect(host.code).toBe(0);
  });

  // One doctor run.
  it('says ripgrep is not installed and what search does instead (a warning)', runs(1), async () => {
    // An empty PATH folder: node is started by its full path, and rg is nowhere to be found.
    const bin = path.join(dir, 'bin-no-rg');
    mkdirSync(bin, { recursive: true });
    const r = await doctor({ PATH: bin });
    expect(r.out).toContain(
      'warn  ripgrep: ripgrep (rg) is not installed; the search tool falls back to its built-in JavaScript search (slower on large workspaces). Install the ripgrep package to use it\n',
    );
    expect(r.code).toBe(0);
  });
});

/** A port free at 127.0.0.1 a moment ago. */
async function freePort(): Promise<number> {
  const probe = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => probe.once('listening', r));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}
