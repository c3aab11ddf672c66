import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config.js';
import { AccessControl } from '../../src/core/access.js';
import { migrateToLatest } from '../../src/store/db.js';
import { allRules, insertRule } from '../../src/store/repos/approvals.js';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { hasSystemTool } from '../helpers/system-tools.js';
import { openTestDatabase, testDatabaseUrl } from '../helpers/test-db.js';
import { channelKinds } from '../../src/channels/registry.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');
/** Tests that start the CLI several times: each start compiles the sources (seconds on a busy machine). */
const CLI_TIMEOUT = 90_000;
let llm: ScriptedLlm;
let dir: string;
let env: Record<string, string>;

/** Run the CLI and wait (spawnSync blocks this process, so nothing here may need to answer it). */
function cli(args: string[], extra: Record<string, string> = {}) {
  return spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env, ...extra },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-cmd-'));
  mkdirSync(path.join(dir, 'ws'));
  env = {
    DATABASE_URL: testDatabaseUrl(dir, 'db'),
    SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
    OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    LOG_LEVEL: 'silent',
    // Port 0: doctor's port check (test/cli/doctor.test.ts) must not depend on 8080 being free here.
    SWITCHBOARD_HTTP_PORT: '0',
  };
});
afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('switchboard migrate / pair / doctor / --help', () => {
  it('--help lists every command', () => {
    const r = cli(['--help']);
    expect(r.status).toBe(0);
    for (const c of ['start', 'chat', '--jsonl', 'migrate', 'doctor', 'pair list', 'pair approve'])
      expect(r.stdout).toContain(c);
  });

  it('start with no channel (no platform token, the web chat off) and no terminal exits 2 with the reason instead of a silent exit', () => {
    const r = cli(['start'], { TELEGRAM_BOT_TOKEN: '', SLACK_BOT_TOKEN: '', SWITCHBOARD__WEB__ENABLED: 'false' });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'start: no channel configured (set TELEGRAM_BOT_TOKEN, set SLACK_BOT_TOKEN or set DISCORD_BOT_TOKEN, or set web.enabled = true) and no terminal for the console chat; for scripts use `switchboard chat --jsonl`\n',
    );
  });

  it(
    '--version, version and help',
    () => {
      const version = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')).version;
      for (const args of [['--version'], ['-v'], ['version']])
        expect(cli(args).stdout).toBe(`switchboard ${version}\n`);
      const help = cli(['help']);
      expect(help.status).toBe(0);
      expect(help.stdout).toContain('rules revoke ID');
    },
    CLI_TIMEOUT,
  );

  it(
    'rules list / revoke in the documented format',
    async () => {
      const rulesEnv = { DATABASE_URL: testDatabaseUrl(dir, 'rules') };
      const db = openTestDatabase(dir, 'rules');
      await migrateToLatest(db);
      await insertRule(db, {
        tool_glob: 'write_file',
        path_glob: 'notes/a.txt',
        action: 'allow',
        priority: 0,
        conversation_id: null,
        user_id: 'telegram:7',
        created_by: 'telegram:7',
      });
      const id = (await allRules(db)).at(-1)!.id;
      await db.destroy();
      const list = cli(['rules', 'list'], rulesEnv);
      expect(list.status).toBe(0);
      expect(list.stdout).toMatch(
        new RegExp(
          `^${id}  write_file  notes/a.txt  allow  user telegram:7  telegram:7  \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z$`,
          'm',
        ),
      );
      const revoke = cli(['rules', 'revoke', String(id)], rulesEnv);
      expect(revoke.status).toBe(0);
      expect(revoke.stdout).toMatch(new RegExp(`^revoked ${id}  write_file`));
      const again = cli(['rules', 'revoke', String(id)], rulesEnv);
      expect(again.status).toBe(1);
      expect(again.stderr).toBe(`no rule #${id}\n`);
      expect(cli(['rules', 'revoke', 'x'], rulesEnv).status).toBe(2);
    },
    CLI_TIMEOUT,
  );

  it('a misspelt key in the config file exits 2 with one line naming it and the closest valid key', () => {
    const file = path.join(dir, 'typo.toml');
    writeFileSync(file, '[http]\nprot = 9090\n');
    const r = cli(['migrate', '--config', file]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`config: unknown key http.prot in ${file} — did you mean http.port?\n`);
  });

  it('migrate applies once, then reports up to date', () => {
    // A database of its own: whatever ran before in this file, this one starts empty.
    const own = { DATABASE_URL: testDatabaseUrl(dir, 'migrate') };
    const first = cli(['migrate'], own);
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^applied: 2026-11-30T01-30_core/);
    const second = cli(['migrate'], own);
    expect(second.stdout).toBe('database is up to date\n');
  });

  it(
    'pair list prints pending codes in the contract format, and pair approve lets the user in',
    async () => {
      const config = configSchema.parse({ store: { database_url: env.DATABASE_URL } });
      const db = openTestDatabase(dir, 'db');
      await migrateToLatest(db);
      const access = new AccessControl(db, config, channelKinds);
      const { code } = await access.requestPairing('telegram', '4242', 'Ada Lovelace', '4242');
      const list = cli(['pair', 'list']);
      expect(list.status).toBe(0);
      expect(list.stdout).toMatch(
        new RegExp(`^${code}  telegram  4242  Ada Lovelace  \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\n$`),
      );
      expect(code).toMatch(/^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{6}$/);

      const bad = cli(['pair', 'approve', 'ZZZZZZ']);
      expect(bad.status).toBe(1);
      expect(bad.stderr).toMatch(/no pending pairing code ZZZZZZ/);
      expect(await access.isAllowed('telegram', '4242')).toBe(false);

      const ok = cli(['pair', 'approve', code.toLowerCase()]);
      expect(ok.status).toBe(0);
      expect(ok.stdout).toBe('paired telegram:4242\n');
      expect(await access.isAllowed('telegram', '4242')).toBe(true);
      expect(cli(['pair', 'list']).stdout).toBe('no pending pairing codes\n');
      expect(cli(['pair', 'approve']).status).toBe(2);
      await db.destroy();
    },
    CLI_TIMEOUT,
  );

  it('doctor fails with a non-zero exit when the model endpoint is unreachable', () => {
    const r = cli(['doctor']);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^ok +config: /m);
    expect(r.stdout).toMatch(/^ok +database: /m);
    expect(r.stdout).toMatch(/^FAIL +model endpoint: cannot reach the model endpoint/m);
  });

  /** Run the doctor as a child process (async: the emulator in this process must answer it). */
  async function doctor(
    extra: Record<string, string>,
    args: string[] = [],
  ): Promise<{ code: number | null; out: string }> {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [BIN, 'doctor', ...args], {
      env: { ...process.env, ...env, OPENAI_BASE_URL: llm.url, ...extra },
    });
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    return { code, out };
  }

  it('doctor passes against a reachable endpoint that lists the model', async () => {
    llm.models = ['other', 'test-model'];
    const r = await doctor({ SWITCHBOARD_MODEL: 'test-model' });
    expect(r.out).toMatch(/^ok +model endpoint: http:\/\/127\.0\.0\.1:\d+\/v1 answers$/m);
    expect(r.out).toMatch(/^ok +model: "test-model" is listed by the endpoint$/m);
    expect(r.code).toBe(0);
  });

  it(
    'doctor fails a model the endpoint does not list, and only warns when the endpoint lists none',
    async () => {
      llm.models = ['llama3.1:8b', 'qwen2.5:7b'];
      const missing = await doctor({ SWITCHBOARD_MODEL: 'llama3.1' });
      expect(missing.out).toMatch(
        /^FAIL +model: "llama3\.1" is not listed by .* \(it lists: llama3\.1:8b, qwen2\.5:7b\)$/m,
      );
      expect(missing.code).toBe(1);
      llm.models = null;
      const unlisted = await doctor({ SWITCHBOARD_MODEL: 'llama3.1' });
      expect(unlisted.out).toMatch(/^warn +model: .* does not list its models; could not check "llama3\.1"$/m);
      expect(unlisted.code).toBe(0);
      llm.models = ['test-model'];
    },
    CLI_TIMEOUT,
  );

  it(
    'doctor says which shell sandbox is in force',
    async () => {
      const off = await doctor({ SWITCHBOARD__TOOLS__BASH__SANDBOX: 'off' });
      expect(off.out).toMatch(
        /^warn +shell sandbox: off \(tools\.bash\.sandbox\): commands get a clean environment only/m,
      );
      const auto = await doctor({});
      if (hasSystemTool('bwrap'))
        expect(auto.out).toMatch(/^ok +shell sandbox: bubblewrap \(bubblewrap [\d.]+\): own PID namespace/m);
      else
        expect(auto.out).toMatch(
          /^warn +shell sandbox: bubblewrap \(bwrap\) is not installed; commands get a clean environment only/m,
        );
    },
    CLI_TIMEOUT,
  );

  it('doctor reports every configuration fault and still runs every other check', async () => {
    const file = path.join(dir, 'faulty.toml');
    writeFileSync(
      file,
      '[llm]\nbase_url = "localhost:11434/v1"\n[slack]\nbot_token = "xoxb-1"\napi_url = "http://127.0.0.1:9/api/"\n',
    );
    const r = await doctor({ OPENAI_BASE_URL: '', SWITCHBOARD_MODEL: 'test-model' }, ['--config', file]);
    expect(r.code).toBe(2);
    expect(r.out).toContain(
      `FAIL  config: llm.base_url (in ${file}): expected an http(s) URL such as http://127.0.0.1:11434/v1\n`,
    );
    expect(r.out).toContain('FAIL  config: slack.signing_secret (or env SLACK_SIGNING_SECRET): required for HTTP mode');
    for (const check of ['database', 'workspace', 'model endpoint', 'slack', 'ripgrep'])
      expect(r.out).toMatch(new RegExp(`^(ok|warn|FAIL) +${check}: `, 'm'));
  });

  it('unknown commands and flags exit 2 with one line', () => {
    const r = cli(['frobnicate']);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    const f = cli(['start', '--nope']);
    expect(f.status).toBe(2);
    expect(f.stderr).toMatch(/^usage: /);
  });
});
