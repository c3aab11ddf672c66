/**
 * The CLI's subcommands: each has its own --help with examples; `jobs add` makes a job without
 * the model, validated like the schedule_job tool; `pair list` and `rules list` say what they show.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_HELP } from '../../src/cli-help.js';
import { RULES_HEADER } from '../../src/core/rules-command.js';
import { migrateToLatest } from '../../src/store/db.js';
import { insertRule } from '../../src/store/repos/approvals.js';
import { getJob, listJobs } from '../../src/store/repos/jobs.js';
import { openTestDatabase, testDatabaseUrl } from '../helpers/test-db.js';
import { budget, CHILD_START_MS, times } from '../helpers/budgets.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');
let dir: string;
let env: Record<string, string>;
function cli(args: string[], extra: Record<string, string> = {}) {
  return spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env, ...extra },
    encoding: 'utf8',
    timeout: CHILD_START_MS,
  });
}
/**
 * The timeout of a test of `n` CLI runs one after another: each run is a child's start and a
 * little work, ended at {@link CHILD_START_MS}, so the test's budget is their sum (runs side by
 * side count once), not the suite's 20 s default that eight runs exceed on a loaded machine.
 */
const runs = (n: number) => ({ timeout: budget(...times(n, CHILD_START_MS)) });
/** {@link cli} without blocking, so several run at once. */
function cliAsync(args: string[]): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, ...env }, encoding: 'utf8', timeout: CHILD_START_MS },
      (err, stdout) => resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout }),
    );
    child.stdin?.end();
  });
}
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-sub-'));
  mkdirSync(path.join(dir, 'ws'));
  env = {
    DATABASE_URL: testDatabaseUrl(dir, 'db'),
    SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
    LOG_LEVEL: 'silent',
    SWITCHBOARD__JOBS__TIMEZONE: 'UTC',
    // The channels the reports go to are configured (jobs add refuses a channel that is not).
    TELEGRAM_BOT_TOKEN: '123:test',
    SLACK_BOT_TOKEN: 'xoxb-test',
    SLACK_APP_TOKEN: 'xapp-test',
  };
});
afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

describe('switchboard COMMAND --help', () => {
  // Runs: the global help, the ten side by side, help jobs.
  it('prints each command’s own usage with examples, not the global help', runs(3), async () => {
    const global = cli(['--help']).stdout;
    const commands = ['start', 'chat', 'migrate', 'doctor', 'pair', 'jobs', 'notify', 'rules', 'mcp', 'web'];
    // Side by side: ten CLI starts one after another outlast the test's time on a loaded machine.
    const runs = await Promise.all(commands.map((command) => cliAsync([command, '--help'])));
    commands.forEach((command, i) => {
      const r = runs[i]!;
      expect(r.status, command).toBe(0);
      expect(r.stdout, command).toBe(COMMAND_HELP[command]);
      expect(r.stdout, command).toMatch(new RegExp(`^Usage: switchboard ${command}`));
      expect(r.stdout, command).toMatch(/\nExamples?:\n {2}/);
      expect(r.stdout).not.toBe(global);
    });
    expect(cli(['help', 'jobs']).stdout).toBe(COMMAND_HELP.jobs);
    expect(global).toContain('jobs add (--cron EXPR | --at TIME)');
    expect(global).toContain('chat --demo');
  });
});

describe('switchboard jobs add', () => {
  it('schedules a cron job to a chat, with the schedule_job answer, and lists it', runs(2), async () => {
    const r = cli([
      'jobs',
      'add',
      '--cron',
      '0 9 * * 1-5',
      '--tz',
      'Europe/Berlin',
      '--to',
      'telegram:123',
      '--name',
      'build check',
      'Check the build and tell me',
    ]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const m = /^Scheduled job ([a-z2-9]{8}) “build check”; next run (.+); reports to telegram:123\.\n$/.exec(r.stdout);
    expect(m).not.toBeNull();
    const db = openTestDatabase(dir, 'db');
    try {
      const job = await getJob(db, m?.[1] as string);
      expect(job).toMatchObject({
        cron: '0 9 * * 1-5',
        timezone: 'Europe/Berlin',
        prompt: 'Check the build and tell me',
        owner_id: 'telegram:123',
        run_at: null,
      });
      expect(Number(job?.next_run_at)).toBeGreaterThan(Date.now());
      const conv = await db
        .selectFrom('conversations')
        .select(['channel', 'chat_key'])
        .where('id', '=', job?.report_conversation_id as string)
        .executeTakeFirstOrThrow();
      expect(conv).toEqual({ channel: 'telegram', chat_key: '123' });
    } finally {
      await db.destroy();
    }
    expect(cli(['jobs', 'list']).stdout).toContain('build check');
  });

  it('schedules a one-off --at job; the name defaults to the prompt', runs(1), () => {
    const r = cli(['jobs', 'add', '--at', '2099-01-02T03:04', '--to', 'slack:C0123', 'call', 'home']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /^Scheduled job [a-z2-9]{8} “call home”; next run 2099-01-02 03:04 .*; reports to slack:C0123\.\n$/,
    );
  });

  // Runs: one a case.
  it('refuses bad input with one line and schedules nothing', runs(8), async () => {
    const db = openTestDatabase(dir, 'db');
    await migrateToLatest(db);
    const before = (await listJobs(db)).length;
    const cases: Array<[string[], RegExp]> = [
      [
        ['--cron', '99 * * * *', '--to', 'telegram:1', 'x'],
        /^jobs add: bad cron expression "99 \* \* \* \*".*Nothing was scheduled\.\n$/,
      ],
      [
        ['--cron', '* * * * *', '--at', '2099-01-01T00:00', '--to', 'telegram:1', 'x'],
        /^jobs add: .*Nothing was scheduled\.\n$/,
      ],
      [['--to', 'telegram:1', 'x'], /^jobs add: .*Nothing was scheduled\.\n$/],
      [['--at', '2000-01-01T00:00', '--to', 'telegram:1', 'x'], /^jobs add: .*Nothing was scheduled\.\n$/],
      [
        ['--cron', '0 9 * * *', '--tz', 'Mars/Olympus', '--to', 'telegram:1', 'x'],
        /^jobs add: .*Mars\/Olympus.*Nothing was scheduled\.\n$/,
      ],
      [['--cron', '0 9 * * *', '--to', 'nowhere', 'x'], /^jobs add: --to takes CHANNEL:CHAT/],
      [['--cron', '0 9 * * *', 'x'], /^jobs add: say where the report goes with --to CHANNEL:CHAT/],
      [['--cron', '0 9 * * *', '--to', 'telegram:1'], /^usage: switchboard jobs add .*\(the prompt is empty\)\n$/],
    ];
    try {
      for (const [args, message] of cases) {
        const r = cli(['jobs', 'add', ...args]);
        expect(r.status, args.join(' ')).toBe(2);
        expect(r.stderr, args.join(' ')).toMatch(message);
        expect(r.stdout).toBe('');
      }
      expect(await listJobs(db)).toHaveLength(before);
    } finally {
      await db.destroy();
    }
  });
});

describe('jobs add to a channel that is not configured', () => {
  // Runs: the misspelt one, three channels, the console.
  it('is refused with what turns the channel on, for every channel, and nothing is scheduled', runs(5), async () => {
    const off = {
      TELEGRAM_BOT_TOKEN: '',
      SLACK_BOT_TOKEN: '',
      SLACK_APP_TOKEN: '',
      SWITCHBOARD__WEB__ENABLED: 'false',
      DATABASE_URL: testDatabaseUrl(dir, 'off'),
    };
    const misspelt = cli(['jobs', 'add', '--cron', '0 9 * * *', '--to', 'telgram:1', 'x'], off);
    expect(misspelt.stderr).toBe(
      'jobs add: --to telgram:1: there is no channel "telgram" (channels: telegram, slack, discord, web, console). Nothing was scheduled.\n',
    );
    expect(misspelt.status).toBe(2);
    const cases: Array<[string, string]> = [
      ['telegram:123', 'telegram is not configured (set TELEGRAM_BOT_TOKEN)'],
      ['slack:C0123', 'slack is not configured (set SLACK_BOT_TOKEN)'],
      ['web:ada', 'web is not configured (set web.enabled = true)'],
    ];
    for (const [to, why] of cases) {
      const r = cli(['jobs', 'add', '--cron', '0 9 * * *', '--to', to, 'x'], off);
      expect(r.stderr, to).toBe(
        `jobs add: --to ${to}: ${why}, so its report could never be delivered. Nothing was scheduled.\n`,
      );
      expect(r.status, to).toBe(2);
    }
    // The terminal chat needs no configuration.
    expect(cli(['jobs', 'add', '--cron', '0 9 * * *', '--to', 'console:main', 'x'], off).status).toBe(0);
    const db = openTestDatabase(dir, 'off');
    try {
      expect((await listJobs(db)).map((j) => j.prompt)).toEqual(['x']);
    } finally {
      await db.destroy();
    }
  });
});

describe('flags the command line does not know', () => {
  it('are named with straight quoting and the help to read', runs(3), () => {
    const r = cli(['chat', '--bogus']);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'usage: unknown option --bogus for chat (see switchboard chat --help; text that starts with "-" goes after --)\n',
    );
    expect(cli(['jobs', 'add', '--cron']).stderr).toBe('usage: --cron needs a value (see switchboard jobs --help)\n');
    expect(cli(['chat', '--jsonl=yes']).stderr).toBe('usage: --jsonl takes no value (see switchboard chat --help)\n');
  });

  it('the help of chat --jsonl points to where the protocol is, and that is in the README too', runs(2), () => {
    expect(cli(['chat', '--jsonl', '--help']).stdout).toContain(
      'the protocol is in\ndocs/commands.md, "JSONL protocol"',
    );
    expect(cli(['--help']).stdout).not.toContain('see README');
    const readme = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');
    expect(readme).toContain('`switchboard chat --jsonl` ([protocol](docs/commands.md#jsonl-protocol))');
    const commands = readFileSync(path.resolve(import.meta.dirname, '../../docs/commands.md'), 'utf8');
    expect(commands).toContain('\n## JSONL protocol\n');
  });
});

describe('pair list and rules list', () => {
  it('pair list says so when nothing is pending; rules list has the chat’s header', runs(2), async () => {
    const own = { DATABASE_URL: testDatabaseUrl(dir, 'lists') };
    expect(cli(['pair', 'list'], own).stdout).toBe('no pending pairing codes\n');
    const db = openTestDatabase(dir, 'lists');
    try {
      await migrateToLatest(db);
      await insertRule(db, {
        tool_glob: 'write_file',
        path_glob: 'notes/*',
        action: 'allow',
        priority: 0,
        conversation_id: null,
        user_id: 'telegram:1',
        created_by: 'telegram:1',
      });
    } finally {
      await db.destroy();
    }
    const lines = cli(['rules', 'list'], own).stdout.split('\n');
    expect(lines[0]).toBe(RULES_HEADER);
    expect(lines[1]).toMatch(/^\d+ {2}write_file {2}notes\/\* {2}allow/);
  });
});
