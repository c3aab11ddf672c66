/**
 * Start-up cost of `switchboard start` with a Telegram token, as users run it (compiled, `node
 * dist/bundle/src/cli.js start`), against a bare grammY bot (`bench/bare-bot.mjs`, the floor for this
 * machine) on the same Telegram emulator. Per run and side: CPU (utime + stime from /proc) of the
 * process until its first getUpdates reaches the emulator, wall time until then, and RSS one
 * second later. Two switchboard figures: a first start (a new database: every migration runs) and
 * a restart over that database (nothing to migrate: the usual case). Sides alternate within each
 * run. Prints every run, then the median [min–max]; asserts nothing.
 * Env: BENCH_STARTUP_RUNS (default 7), BENCH_SB_ENTRY (the script node runs; default
 * dist/bundle/src/cli.js), BENCH_BEFORE_ENTRY (an older build's entry, measured as more sides in the same
 * runs, for before/after figures), BENCH_CPU_PROF=dir (switchboard under `node --cpu-prof` into dir).
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { switchboardEnv } from './switchboard-env.js';
import { startTelegramEmulator } from '../test/emulators/telegram.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '..');
const TOKEN = '424242:BENCH-token';
const TICK_MS = 1000 / 100; // /proc/<pid>/stat counts CPU in USER_HZ (100 on Linux)

/** `bare`, or `<build> first start` / `<build> restart`. */
type Side = string;
interface Figures {
  cpuMs: number;
  wallMs: number;
  rssMb: number;
}

function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime, stime
}
function rssMb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? Number.NaN) / 1024;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Start one side in `dir` and measure it up to its first getUpdates (and RSS a second later). */
async function startOnce(side: Side, entry: string | null, dir: string): Promise<Figures> {
  let ready: () => void = () => {};
  const readyP = new Promise<void>((r) => {
    ready = r;
  });
  const emu = await startTelegramEmulator({
    token: TOKEN,
    recordCalls: false,
    onCall: (m) => m === 'getUpdates' && ready(),
  });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TELEGRAM_BOT_TOKEN: TOKEN,
    TELEGRAM_API_ROOT: emu.apiRoot,
    // nothing is asked of the model before the first message; a closed port proves it
    OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    OPENAI_API_KEY: 'bench',
  };
  let args: string[];
  if (entry === null) {
    args = [path.join(here, 'bare-bot.mjs')];
  } else {
    Object.assign(env, switchboardEnv(dir, [5000]));
    const prof = process.env.BENCH_CPU_PROF
      ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`]
      : [];
    args = [...prof, path.resolve(entry), 'start'];
  }
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { env, cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = once(child, 'exit');
  try {
    await Promise.race([readyP, exited.then(() => Promise.reject(new Error(`${side} exited before polling`)))]);
    const pid = child.pid as number;
    const figures = { cpuMs: cpuMs(pid), wallMs: performance.now() - t0, rssMb: 0 };
    await sleep(1000);
    figures.rssMb = rssMb(pid);
    return figures;
  } finally {
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000)]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await emu.close();
  }
}

/** Run the start-up comparison and print its figures. */
export async function run(): Promise<void> {
  const runs = Number(process.env.BENCH_STARTUP_RUNS ?? 7);
  if (
    spawnSync(process.execPath, [path.join(ROOT, 'scripts/build.mjs'), '--if-stale'], { stdio: 'inherit' }).status !== 0
  )
    throw new Error('build failed');
  const builds: Array<[string, string]> = [
    ['', process.env.BENCH_SB_ENTRY ?? path.join(ROOT, 'dist/bundle/src/cli.js')],
  ];
  if (process.env.BENCH_BEFORE_ENTRY) builds.unshift(['before ', process.env.BENCH_BEFORE_ENTRY]);
  const sides: Side[] = ['bare', ...builds.flatMap(([label]) => [`${label}first start`, `${label}restart`])];
  const results = new Map<Side, Figures[]>(sides.map((s) => [s, []]));
  const record = (side: Side, f: Figures, line: string[]) => {
    results.get(side)?.push(f);
    line.push(`${side} ${f.cpuMs.toFixed(0)} ms CPU / ${f.wallMs.toFixed(0)} ms / ${f.rssMb.toFixed(0)} MB`);
  };
  for (let r = 0; r < runs; r++) {
    // each build starts over a new database, then restarts over it; the order alternates per run
    const order: Array<[string, string | null]> = [['', null], ...builds];
    if (r % 2 === 1) order.reverse();
    const line: string[] = [];
    for (const [label, entry] of order) {
      if (entry === null) {
        record('bare', await startOnce('bare', null, os.tmpdir()), line);
        continue;
      }
      const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-bench-startup-'));
      try {
        record(`${label}first start`, await startOnce(`${label}first start`, entry, dir), line);
        record(`${label}restart`, await startOnce(`${label}restart`, entry, dir), line);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    console.log(`  run ${r + 1}: ${line.join('; ')}`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const fmt = (xs: number[]) =>
    `${median(xs).toFixed(0)} [${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}]`;
  console.log(
    `startup: \`switchboard start\` (Telegram) until its first getUpdates vs a bare grammY bot, ${runs} runs each; median [min–max]`,
  );
  console.log(`  ${'figure'.padEnd(22)}${sides.map((s) => s.padEnd(22)).join('')}`);
  for (const [key, label] of [
    ['cpuMs', 'CPU (ms)'],
    ['wallMs', 'wall (ms)'],
    ['rssMb', 'RSS after 1 s (MB)'],
  ] as const) {
    console.log(
      `  ${label.padEnd(22)}${sides.map((s) => fmt((results.get(s) ?? []).map((f) => f[key])).padEnd(22)).join('')}`,
    );
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await run();
