/**
 * Poller failover (`node --import tsx bench/failover.ts`, also part of `npm run bench`): how long
 * the Telegram chats go unpolled when the instance polling `getUpdates` dies or stalls. Setups:
 * 3 `switchboard start` processes over one PostgreSQL database (`BENCH_DATABASE_URL`; skipped
 * without it), and 1 process over a SQLite file that is restarted after each kill. The current
 * poller (the holder named in the `telegram-poller:<bot id>` lease row) is SIGKILLed at a random
 * moment 0.3–3 s after one of its getUpdates, FAILOVER_KILLS times (default 20) per setup, on a
 * quiet machine and on a busy one (one spinning process per core, started and stopped by the
 * bench, each ending by itself after at most FAILOVER_HOG_MAX_S seconds). The killed process is
 * started again at once, as a supervisor would. Over PostgreSQL the poller is then also stalled
 * FAILOVER_STALLS times (default 5): SIGSTOP for 8 s, past its lease, then SIGCONT. While it runs,
 * a group chat sends a message (not addressed to the bot) every 200 ms, so `getUpdates` returns
 * often and the last one before a kill is close to it.
 *
 * Per kill or stall: the gap between the last `getUpdates` that reached the Telegram emulator
 * before it and the first one after it (any process); per stall also whether anybody still polled
 * afterwards. Prints median and maximum per setup and load; asserts nothing. FAILOVER_GIVE_UP_S
 * (default 60) ends a wait that found no poller.
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
const STALLS = Number(process.env.FAILOVER_STALLS ?? 5);
/** A stall outlasts the poller's 6 s lease. */
const STALL_MS = 8_000;
/** How long after a stall the bench looks whether anybody still polls. */
const STALL_WATCH_MS = 6_000;
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
  /** Also stall the poller (SIGSTOP past its lease, then SIGCONT) STALLS times (needs a standby). */
  stalls: boolean;
}

interface Figures {
  /** Per kill: last poll before it to first poll after it, ms. */
  kills: number[];
  /** Per stall: last poll before it to the first poll by the successor, ms. */
  stalls: number[];
  /** Stalls after which nobody polled any more (the stalled poller's return ended its successor's loop). */
  silent: number;
}

/** Kill the poller of `setup` KILLS times (then stall it STALLS times); the gaps in ms. */
async function measure(setup: Setup, emu: TelegramEmulator, polls: number[], llmUrl: string): Promise<Figures> {
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
  const figures: Figures = { kills: [], stalls: [], silent: 0 };
  let chatter: NodeJS.Timeout | undefined;
  try {
    for (let i = 0; i < setup.instances; i++) procs.push(await startProcess(env, 60_000));
    // Group chatter not addressed to the bot: every update ends a long poll, no turn runs.
    chatter = setInterval(() => emu.sendText({ id: 6000 }, 'chatter', { chatId: -100 }), 200);
    /** The process holding the poller lease, once it has polled; then a random 0.3–3 s more. */
    const pollerAtRandomMoment = async (): Promise<StartedProcess> => {
      const pid = await until(async () => {
        const holder = await pollerPid(db);
        return procs.some((p) => p.child.pid === holder) ? holder : undefined;
      }, 'a poller');
      const firstPoll = polls.length;
      await until(() => polls.length > firstPoll || undefined, 'the poller to poll');
      await sleep(300 + random() * 2_700);
      return procs.find((p) => p.child.pid === pid) as StartedProcess;
    };
    for (let k = 0; k < KILLS; k++) {
      const victim = await pollerAtRandomMoment();
      await victim.kill();
      const killedAt = Date.now();
      const before = polls.filter((t) => t <= killedAt).at(-1) ?? killedAt;
      procs.splice(procs.indexOf(victim), 1);
      // Started again at once, as a supervisor would: the restarted process may be the one that takes over.
      const restart = startProcess(env, 60_000);
      const after = await until(() => polls.find((t) => t > killedAt), 'a poll after the kill').catch(() => undefined);
      figures.kills.push((after ?? Date.now()) - before);
      procs.push(await restart);
    }
    for (let k = 0; setup.stalls && k < STALLS; k++) {
      const victim = await pollerAtRandomMoment();
      const pid = victim.child.pid as number;
      process.kill(pid, 'SIGSTOP');
      const stoppedAt = Date.now();
      const before = polls.filter((t) => t <= stoppedAt).at(-1) ?? stoppedAt;
      const after = await until(() => polls.find((t) => t > stoppedAt), 'a poll after the stall').catch(
        () => undefined,
      );
      figures.stalls.push((after ?? Date.now()) - before);
      // Past the lease, so the successor is certainly polling; then the stalled one runs again.
      await sleep(Math.max(0, stoppedAt + STALL_MS - Date.now()));
      process.kill(pid, 'SIGCONT');
      const resumedAt = Date.now();
      await sleep(STALL_WATCH_MS);
      if (polls.some((t) => t > resumedAt + STALL_WATCH_MS / 2)) continue;
      // Nobody polls while the lease says somebody does: end the holder, so the next stall has a poller.
      figures.silent++;
      const holder = await pollerPid(db);
      const stuck = procs.find((p) => p.child.pid === holder);
      if (stuck) {
        await stuck.kill();
        procs.splice(procs.indexOf(stuck), 1, await startProcess(env, 60_000));
      }
    }
  } finally {
    clearInterval(chatter);
    for (const p of procs) await p.kill();
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}

function summary(gaps: number[], what: string): string {
  const sorted = [...gaps].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return `median ${s(median)}, max ${s(sorted.at(-1) ?? Number.NaN)} (${gaps.length} ${what}; all: ${gaps.map((g) => (g / 1000).toFixed(1)).join(' ')})`;
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
        setups.push({ label: 'PostgreSQL, 3 instances', databaseUrl: u.toString(), instances: 3, stalls: true });
      }
      setups.push({
        label: 'SQLite, 1 restarted',
        databaseUrl: `sqlite:${path.join(sqliteDir, `${busy ? 'busy' : 'quiet'}.db`)}`,
        instances: 1,
        stalls: false,
      });
      for (const setup of setups) {
        const hogs = busy ? startCpuHogs(HOG_MAX_S) : [];
        try {
          const figures = await measure(setup, emu, polls, llm.url);
          const label = `failover  ${setup.label.padEnd(24)} ${busy ? 'busy ' : 'quiet'}`;
          console.log(`${label}  SIGKILL: ${summary(figures.kills, 'kills')}`);
          if (setup.stalls) {
            console.log(
              `${label}  SIGSTOP ${STALL_MS / 1000} s: ${summary(figures.stalls, 'stalls')}; nobody polling afterwards: ${figures.silent}`,
            );
          }
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
