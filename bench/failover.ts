/**
 * Poller failover (`node --import tsx bench/failover.ts`, also part of `npm run bench`): how long
 * the Telegram chats go unpolled when the instance polling `getUpdates` is SIGKILLed. Setups:
 * 3 `switchboard start` processes over one PostgreSQL database (`BENCH_DATABASE_URL`; skipped
 * without it), and 1 process over a SQLite file that is restarted after each kill. The current
 * poller (the holder named in the `telegram-poller:<bot id>` lease row) is killed at a random
 * moment 0.3–3 s after it began polling, FAILOVER_KILLS times (default 20) per setup, on a quiet
 * machine and on a busy one (one spinning process per core, started and stopped by the bench,
 * each ending by itself after at most FAILOVER_HOG_MAX_S seconds). The killed process is started
 * again at once. While it runs, a group chat sends a message (not addressed to the bot) every
 * 200 ms, so `getUpdates` returns often and the last one before a kill is close to it.
 *
 * Per kill: the gap between the last `getUpdates` that reached the Telegram emulator before the
 * kill and the first one after it (any process). Prints median and maximum per setup and load;
 * asserts nothing. FAILOVER_GIVE_UP_S (default 60) ends a wait that found no poller.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { databaseTarget } from '../src/config.js';
import { type Db, openDatabase } from '../src/store/db.js';
import { startScriptedLlm } from '../test/emulators/llm.js';
import { startTelegramEmulator, type TelegramEmulator } from '../test/emulators/telegram.js';
import { type StartedProcess, startProcess, writeConfig } from '../test/helpers/child-start.js';

const KILLS = Number(process.env.FAILOVER_KILLS ?? 20);
const GIVE_UP_MS = Number(process.env.FAILOVER_GIVE_UP_S ?? 60) * 1000;
const HOG_MAX_S = Number(process.env.FAILOVER_HOG_MAX_S ?? 900);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A deterministic random source (runs can be repeated). */
function seeded(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

/** `check`'s first defined answer, looked at every 20 ms; throws after FAILOVER_GIVE_UP_S. */
async function until<T>(check: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > GIVE_UP_MS) throw new Error(`failover: no ${what} within ${GIVE_UP_MS} ms`);
    await sleep(20);
  }
}

/** One spinning process per core, each ending by itself after `maxSeconds` if the bench dies first. */
function startCpuHogs(maxSeconds: number): ChildProcess[] {
  const spin = `const end = Date.now() + ${maxSeconds * 1000}; while (Date.now() < end) {}`;
  return os.cpus().map(() => spawn(process.execPath, ['-e', spin], { stdio: 'ignore' }));
}

/** The lease row's holder of the poller election: `host:pid:…`, or undefined while free. */
async function pollerPid(db: Db): Promise<number | undefined> {
  const row = await db
    .selectFrom('leases')
    .select(['holder', 'expires_at'])
    .where('name', 'like', 'telegram-poller:%')
    .executeTakeFirst();
  if (!row || Number(row.expires_at) <= Date.now()) return undefined;
  return Number(row.holder.split(':')[1]);
}

interface Setup {
  label: string;
  databaseUrl: string;
  instances: number;
}

/** Kill the poller of `setup` KILLS times; the gaps in ms. */
async function measure(setup: Setup, emu: TelegramEmulator, polls: number[], llmUrl: string): Promise<number[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-bench-failover-'));
  const env = {
    SWITCHBOARD_CONFIG: writeConfig(dir),
    TELEGRAM_BOT_TOKEN: emu.token,
    TELEGRAM_API_ROOT: emu.apiRoot,
    TELEGRAM_ALLOWED_USERS: '5000',
    OPENAI_BASE_URL: llmUrl,
    OPENAI_API_KEY: 'bench',
    SWITCHBOARD_MODEL: 'bench',
    DATABASE_URL: setup.databaseUrl,
    SWITCHBOARD_WORKSPACE: dir,
  };
  const db = openDatabase(databaseTarget(setup.databaseUrl), { poolSize: 1 });
  const procs: StartedProcess[] = [];
  const random = seeded(11);
  const gaps: number[] = [];
  let chatter: NodeJS.Timeout | undefined;
  try {
    for (let i = 0; i < setup.instances; i++) procs.push(await startProcess(env, 60_000));
    // Group chatter not addressed to the bot: every update ends a long poll, no turn runs.
    chatter = setInterval(() => emu.sendText({ id: 6000 }, 'chatter', { chatId: -100 }), 200);
    for (let k = 0; k < KILLS; k++) {
      const pid = await until(async () => {
        const holder = await pollerPid(db);
        return procs.some((p) => p.child.pid === holder) ? holder : undefined;
      }, 'a poller');
      const firstPoll = polls.length;
      await until(() => polls.length > firstPoll || undefined, 'the poller to poll');
      await sleep(300 + random() * 2_700);
      const victim = procs.find((p) => p.child.pid === pid) as StartedProcess;
      await victim.kill();
      const killedAt = Date.now();
      const before = polls.filter((t) => t <= killedAt).at(-1) ?? killedAt;
      procs.splice(procs.indexOf(victim), 1);
      // Started again at once, as a supervisor would: the restarted process may be the one that takes over.
      const restart = startProcess(env, 60_000);
      const after = await until(() => polls.find((t) => t > killedAt), 'a poll after the kill').catch(() => undefined);
      gaps.push((after ?? Date.now()) - before);
      procs.push(await restart);
    }
  } finally {
    clearInterval(chatter);
    for (const p of procs) await p.kill();
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  return gaps;
}

function summary(gaps: number[]): string {
  const sorted = [...gaps].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return `median ${s(median)}, max ${s(sorted.at(-1) ?? Number.NaN)} (${gaps.length} kills; all: ${gaps.map((g) => (g / 1000).toFixed(1)).join(' ')})`;
}

/** Run the failover benchmark and print its figures. */
export async function run(): Promise<void> {
  const polls: number[] = [];
  const emu = await startTelegramEmulator({
    recordCalls: false,
    keepAliveTimeoutMs: 30_000,
    onCall: (method) => method === 'getUpdates' && polls.push(Date.now()),
  });
  const llm = await startScriptedLlm();
  llm.setHandler(() => ({ text: 'ok' }));
  const sqliteDir = mkdtempSync(path.join(os.tmpdir(), 'sb-bench-failover-db-'));
  const pgUrl = process.env.BENCH_DATABASE_URL;
  const admin = pgUrl ? new pg.Client({ connectionString: pgUrl }) : null;
  await admin?.connect();
  try {
    for (const busy of [false, true]) {
      const setups: Setup[] = [];
      if (pgUrl && admin) {
        // A fresh schema per run, so every run starts from an empty database.
        const schema = `bench_failover_${process.pid}_${busy ? 'busy' : 'quiet'}`;
        await admin.query(`CREATE SCHEMA ${schema}`);
        const u = new URL(pgUrl);
        u.searchParams.set('options', `-c search_path=${schema}`);
        setups.push({ label: 'PostgreSQL, 3 instances', databaseUrl: u.toString(), instances: 3 });
      }
      setups.push({
        label: 'SQLite, 1 restarted',
        databaseUrl: `sqlite:${path.join(sqliteDir, `${busy ? 'busy' : 'quiet'}.db`)}`,
        instances: 1,
      });
      for (const setup of setups) {
        const hogs = busy ? startCpuHogs(HOG_MAX_S) : [];
        try {
          const gaps = await measure(setup, emu, polls, llm.url);
          console.log(`failover  ${setup.label.padEnd(24)} ${busy ? 'busy ' : 'quiet'}  ${summary(gaps)}`);
        } finally {
          for (const h of hogs) h.kill('SIGKILL');
        }
      }
    }
    if (!pgUrl) console.log('failover  PostgreSQL figures skipped: set BENCH_DATABASE_URL=postgres://…');
  } finally {
    if (admin) {
      const schemas = await admin.query<{ nspname: string }>(
        `SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bench_failover_${process.pid}_%'`,
      );
      for (const { nspname } of schemas.rows) await admin.query(`DROP SCHEMA ${nspname} CASCADE`);
      await admin.end();
    }
    await emu.close();
    await llm.close();
    rmSync(sqliteDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
