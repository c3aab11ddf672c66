/**
 * switchboard against a bare grammY bot (`bench/bare-bot.mjs`, the floor for this machine), both
 * run as child processes on the same Telegram emulator (in this process) and the same scripted
 * model (a process of its own, zero latency, a streamed three-chunk answer), alternately in the
 * same run. Per side and run:
 * - start-up: CPU of the process until its first getUpdates, RSS two seconds later;
 * - idle: one message at a time, time from the update being available to the answer shown in full
 *   (sendMessage or the edit that completes it), p50/p99;
 * - load: 100 chats × 20 messages, each chat sending its next message when the previous answer
 *   is shown; throughput, p99, CPU per message (the child's utime + stime), peak RSS (VmHWM).
 * Prints every run, the median of each figure and its spread (min–max); asserts nothing.
 * Env: BENCH_RUNS (default 3), BENCH_CHATS (100), BENCH_MESSAGES (20), BENCH_IDLE (200), BENCH_LOAD_ROUNDS (1: the
 * load is run that many times in each process and measured the last time, after the others warmed it up),
 * BENCH_CPU_PROF=dir (switchboard runs under `node --cpu-prof` into dir), BENCH_HEAP_PROF=dir (`--heap-prof`:
 * sampled allocations), BENCH_SB_NODE_FLAGS (node flags for switchboard's side, e.g. heap sizing), BENCH_SB_ENTRY (the script
 * node runs for switchboard; default dist/bundle/src/cli.js), BENCH_BEFORE_ENTRY (an older build or checkout's
 * bin, run as a third side in the same runs, for before/after figures), BENCH_BARE_FLAGS (node flags for the bare bot).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { switchboardEnv } from './switchboard-env.js';
import { startTelegramEmulator, type TelegramEmulator } from '../test/emulators/telegram.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '..');
/** What bench/llm-process.ts answers, streamed in three chunks. */
const REPLY = 'Benchmark reply with a few words in it.';
const TOKEN = '424242:BENCH-token';
const TICK_MS = 1000 / 100; // /proc/<pid>/stat counts CPU in USER_HZ (100 on Linux)

interface Figures {
  startCpuMs: number;
  rssStartMb: number;
  idleP50: number;
  idleP99: number;
  throughput: number;
  loadP99: number;
  cpuPerMsg: number;
  rssPeakMb: number;
  /** Bot API calls other than getUpdates per message under load (sendMessage, edits, chat actions …). */
  callsPerMsg: number;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}
const median = (xs: number[]) => pct(xs, 50);

function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime, stime
}
function statusKb(pid: number, key: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? Number.NaN);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startLlm(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'llm-process.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: child.stdout as NodeJS.ReadableStream }), 'line')) as [string];
  return { url: line.trim(), child };
}

type Side = 'bare' | 'switchboard' | 'before';

function spawnSide(side: Side, emu: TelegramEmulator, llmUrl: string, dir: string, users: number[]): ChildProcess {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TELEGRAM_BOT_TOKEN: TOKEN,
    TELEGRAM_API_ROOT: emu.apiRoot,
    OPENAI_BASE_URL: llmUrl,
    OPENAI_API_KEY: 'bench',
  };
  if (side === 'bare')
    return spawn(
      process.execPath,
      [...(process.env.BENCH_BARE_FLAGS ?? '').split(/\s+/).filter(Boolean), path.join(here, 'bare-bot.mjs')],
      { env, cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] },
    );
  Object.assign(env, switchboardEnv(dir, users), {
    // the per-user flood limit would throttle the benchmark's own traffic
    SWITCHBOARD__ACCESS__RATE_LIMIT_PER_MINUTE: '1000000',
    // the emulator has no send limits and the bare bot does not pace; compare like with like
    SWITCHBOARD__TELEGRAM__PACE_SENDS: 'false',
  });
  const prof = [
    ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : []),
    ...(process.env.BENCH_HEAP_PROF
      ? ['--heap-prof', `--heap-prof-dir=${path.resolve(process.env.BENCH_HEAP_PROF)}`]
      : []),
    // V8 flags to try on switchboard's side (e.g. heap sizing), space-separated
    ...(process.env.BENCH_SB_NODE_FLAGS ? process.env.BENCH_SB_NODE_FLAGS.split(/\s+/).filter(Boolean) : []),
  ];
  const entry =
    side === 'before'
      ? (process.env.BENCH_BEFORE_ENTRY as string)
      : (process.env.BENCH_SB_ENTRY ?? path.join(ROOT, 'dist/bundle/src/cli.js'));
  return spawn(process.execPath, [...prof, path.resolve(entry), 'start'], {
    env,
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function runSide(
  side: Side,
  llmUrl: string,
  chats: number,
  perChat: number,
  idleCount: number,
  loadRounds: number,
): Promise<Figures> {
  const waiting = new Map<number, () => void>();
  const calls = new Map<string, number>();
  let ready: () => void = () => {};
  const readyP = new Promise<void>((r) => {
    ready = r;
  });
  const emu = await startTelegramEmulator({
    token: TOKEN,
    recordCalls: false,
    // Connections kept as api.telegram.org keeps them (the emulator's 1 s default makes Node's
    // client open one per call, which both sides would pay for nothing).
    keepAliveTimeoutMs: 60_000,
    onCall: (method) => {
      if (method === 'getUpdates') ready();
      else calls.set(method, (calls.get(method) ?? 0) + 1);
    },
    onText: (msg) => {
      if (msg.plain.trim() === REPLY) waiting.get(msg.chat_id)?.();
    },
  });
  const dir = mkdtempSync(path.join(os.tmpdir(), `sb-bench-tg-${side}-`));
  const IDLE_CHATS = 10;
  const users = Array.from({ length: chats + IDLE_CHATS }, (_, i) => 5000 + i);
  const child = spawnSide(side, emu, llmUrl, dir, users);
  const exited = once(child, 'exit');
  try {
    await Promise.race([readyP, exited.then(() => Promise.reject(new Error(`${side} exited before polling`)))]);
    const pid = child.pid as number;
    const startCpuMs = cpuMs(pid);
    await sleep(2000);
    const rssStartMb = statusKb(pid, 'VmRSS') / 1024;

    /** One message from `user`; resolves with milliseconds until its answer is shown in full. */
    const ask = (user: number) =>
      new Promise<number>((resolve) => {
        const t = performance.now();
        waiting.set(user, () => {
          waiting.delete(user);
          resolve(performance.now() - t);
        });
        emu.sendText({ id: user, first_name: `u${user}` }, 'hello');
      });

    const idle: number[] = [];
    for (let i = 0; i < idleCount + 20; i++) {
      const d = await ask(users[chats + (i % IDLE_CHATS)] as number);
      if (i >= 20) idle.push(d); // the first few warm up the process
      await sleep(5);
    }

    // Earlier rounds warm the process up (JIT, caches); the figures are of the last one.
    let load: number[] = [];
    let elapsed = 0;
    let cpu = 0;
    for (let round = 0; round < loadRounds; round++) {
      calls.clear();
      const cpu0 = cpuMs(pid);
      const t0 = performance.now();
      load = [];
      await Promise.all(
        users.slice(0, chats).map(async (user) => {
          for (let k = 0; k < perChat; k++) load.push(await ask(user));
        }),
      );
      elapsed = performance.now() - t0;
      cpu = cpuMs(pid) - cpu0;
    }
    const rssPeakMb = statusKb(pid, 'VmHWM') / 1024;
    const totalCalls = [...calls.values()].reduce((a, b) => a + b, 0);
    if (process.env.BENCH_VERBOSE)
      console.log(`  ${side} Bot API calls under load: ${[...calls].map(([m, n]) => `${m} ${n}`).join(', ')}`);
    return {
      callsPerMsg: totalCalls / (chats * perChat),
      startCpuMs,
      rssStartMb,
      idleP50: pct(idle, 50),
      idleP99: pct(idle, 99),
      throughput: (chats * perChat) / (elapsed / 1000),
      loadP99: pct(load, 99),
      cpuPerMsg: cpu / (chats * perChat),
      rssPeakMb,
    };
  } finally {
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000)]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const ROWS: Array<[keyof Figures, string, string, number]> = [
  ['throughput', 'throughput', 'msg/s', 0],
  ['cpuPerMsg', 'CPU per message', 'ms', 2],
  ['loadP99', 'load p99', 'ms', 1],
  ['idleP50', 'idle p50', 'ms', 2],
  ['idleP99', 'idle p99', 'ms', 2],
  ['rssStartMb', 'RSS after start', 'MB', 0],
  ['rssPeakMb', 'RSS peak', 'MB', 0],
  ['startCpuMs', 'start-up CPU', 'ms', 0],
  ['callsPerMsg', 'Bot API calls', 'per msg', 2],
];

/** Run the comparison and print its figures. */
export async function run(): Promise<void> {
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  const chats = Number(process.env.BENCH_CHATS ?? 100);
  const perChat = Number(process.env.BENCH_MESSAGES ?? 20);
  const idleCount = Number(process.env.BENCH_IDLE ?? 200);
  const loadRounds = Math.max(1, Number(process.env.BENCH_LOAD_ROUNDS ?? 1));
  // switchboard runs compiled, as users run it
  if (
    spawnSync(process.execPath, [path.join(ROOT, 'scripts/build.mjs'), '--if-stale'], { stdio: 'inherit' }).status !== 0
  )
    throw new Error('build failed');
  const llm = await startLlm();
  const results: Record<Side, Figures[]> = { bare: [], switchboard: [], before: [] };
  const sides: Side[] = process.env.BENCH_BEFORE_ENTRY ? ['bare', 'before', 'switchboard'] : ['bare', 'switchboard'];
  try {
    for (let r = 0; r < runs; r++) {
      // alternate which side goes first, so neither always meets the other's leftovers
      const order = r % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const f = await runSide(side, llm.url, chats, perChat, idleCount, loadRounds);
        results[side].push(f);
        console.log(
          `  run ${r + 1} ${side.padEnd(11)} ${f.throughput.toFixed(0)} msg/s, ${f.cpuPerMsg.toFixed(2)} ms CPU/msg, load p99 ${f.loadP99.toFixed(1)} ms, idle p50/p99 ${f.idleP50.toFixed(2)}/${f.idleP99.toFixed(2)} ms, RSS ${f.rssStartMb.toFixed(0)}/${f.rssPeakMb.toFixed(0)} MB, start ${f.startCpuMs.toFixed(0)} ms CPU`,
        );
      }
    }
  } finally {
    llm.child.kill('SIGTERM');
  }
  const fmt = (xs: number[], d: number) =>
    `${median(xs).toFixed(d)} [${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)}]`;
  console.log(
    `telegram: switchboard vs bare grammY bot — ${chats} chats × ${perChat} messages${loadRounds > 1 ? ` (the last of ${loadRounds} rounds)` : ''}, ${idleCount} idle messages, ${runs} runs each; median [min–max]`,
  );
  const compared = sides.filter((x) => x !== 'bare');
  console.log(
    `  ${'figure'.padEnd(22)}${'bare bot'.padEnd(26)}${compared.map((x) => `${x}`.padEnd(26) + 'ratio'.padEnd(22)).join('')}`,
  );
  for (const [key, label, unit, d] of ROWS) {
    const b = results.bare.map((f) => f[key]);
    const cols = compared.map((side) => {
      const s = results[side].map((f) => f[key]);
      const ratios = s.map((v, i) => v / (b[i] as number));
      return fmt(s, d).padEnd(26) + `${fmt(ratios, 2)}×`.padEnd(22);
    });
    console.log(`  ${`${label} (${unit})`.padEnd(22)}${fmt(b, d).padEnd(26)}${cols.join('')}`);
  }
  for (const side of compared) {
    const diff = (key: 'idleP50' | 'idleP99') =>
      results[side].map((f, i) => f[key] - (results.bare[i] as Figures)[key]);
    console.log(
      `  ${side}: idle p50 added ${fmt(diff('idleP50'), 2)} ms; idle p99 added ${fmt(diff('idleP99'), 2)} ms`,
    );
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await run();
