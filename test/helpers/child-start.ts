/**
 * `switchboard start` as a child process over a given database, for kill tests: start it, wait
 * until it serves, SIGKILL it at the awkward moment, start it again over the same files.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { CHILD_START_MS } from './budgets.js';
import { waitFor } from './harness.js';
import { testDatabaseUrl } from './test-db.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');

/** A running `switchboard start`. */
export interface StartedProcess {
  child: ChildProcess;
  /** Log lines (parsed JSON) written so far. */
  logs: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
  /** SIGKILL: no shutdown, no flushing, as in a power cut. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
  /** End the parent of an `unreaped` process (its zombie goes with it); nothing otherwise. */
  reap(): void;
}

/** Teardown: empty `procs`, SIGKILL each one still running, and reap it (a test's processes never outlive it). */
export async function killLeftRunning(procs: StartedProcess[]): Promise<void> {
  for (const p of procs.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) await p.kill();
    p.reap();
  }
}

/** Write a config file binding HTTP to loopback (port 0) with the given extra TOML. */
export function writeConfig(dir: string, extraToml = ''): string {
  const file = path.join(dir, 'switchboard.toml');
  writeFileSync(file, `[http]\nhost = "127.0.0.1"\nport = 0\n\n${extraToml}\n`);
  return file;
}

/**
 * The environment of a `switchboard start` child: a config file with `extraToml`, the channel's
 * variables, the scripted model at `modelUrl`, the test database of `dir` (named `db`, so the test
 * can open it too) and a workspace folder under `dir`.
 */
export function childEnv(
  dir: string,
  modelUrl: string,
  extraToml: string,
  channelEnv: Record<string, string>,
): Record<string, string> {
  return { SWITCHBOARD_CONFIG: writeConfig(dir, extraToml), ...channelEnv, ...modelEnv(dir, modelUrl) };
}

/**
 * The part of a child's environment every switchboard child process shares (`start`, `chat`,
 * `chat --jsonl`): the scripted model at `modelUrl`, the test database of `dir` (named `db`, so
 * the test can open it too) and a workspace folder under `dir`, made here.
 */
export function modelEnv(dir: string, modelUrl: string): Record<string, string> {
  mkdirSync(path.join(dir, 'ws'), { recursive: true });
  return {
    OPENAI_BASE_URL: modelUrl,
    OPENAI_API_KEY: 'test-key',
    SWITCHBOARD_MODEL: 'test-model',
    DATABASE_URL: testDatabaseUrl(dir, 'db'),
    SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
  };
}

/**
 * Start `switchboard start` (with `args`) and `env`, and wait for its "switchboard started" line. With
 * `unreaped`, it runs under a parent that never waits for it (a shell that `exec`s into `sleep`):
 * once killed it stays a zombie, its pid still there, until that parent ends (`child` is that
 * parent; `kill` ends it too, so nothing is left behind). The wait is measured to that readiness
 * line with {@link CHILD_START_MS}, the one budget of a child's start under load.
 */
export async function startProcess(
  env: Record<string, string>,
  timeoutMs = CHILD_START_MS,
  options: { unreaped?: boolean; args?: string[] } = {},
): Promise<StartedProcess> {
  const args = options.args ?? [];
  const spawnEnv = { ...process.env, LOG_LEVEL: 'info', ...env };
  const child = options.unreaped
    ? spawn('sh', ['-c', `"$0" "$@" & echo "pid=$!" >&2; exec sleep 600`, process.execPath, BIN, 'start', ...args], {
        env: spawnEnv,
        stdio: ['ignore', 'ignore', 'pipe'],
      })
    : spawn(process.execPath, [BIN, 'start', ...args], { env: spawnEnv, stdio: ['ignore', 'ignore', 'pipe'] });
  const logs: Array<Record<string, unknown>> = [];
  let pid = child.pid ?? 0;
  const childExited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const exited = options.unreaped ? childExited.then(() => null) : childExited;
  createInterface({ input: child.stderr as NonNullable<ChildProcess['stderr']> }).on('line', (line) => {
    const m = options.unreaped ? /^pid=(\d+)$/.exec(line) : null;
    if (m) {
      pid = Number(m[1]);
      return;
    }
    try {
      logs.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      logs.push({ msg: line });
    }
  });
  let dead = false;
  void exited.then(() => {
    dead = true;
  });
  /** The switchboard process is gone or a zombie (its parent has not reaped it). */
  const gone = (): boolean => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return /^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
    } catch {
      return true;
    }
  };
  try {
    await waitFor(() => dead || logs.some((l) => l.msg === 'switchboard started'), 'switchboard to start', timeoutMs);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  if (dead) throw new Error(`switchboard exited during start: ${JSON.stringify(logs.slice(-5))}`);
  return {
    child,
    logs,
    exited,
    async kill() {
      if (!options.unreaped) {
        child.kill('SIGKILL');
        await exited;
        return;
      }
      process.kill(pid, 'SIGKILL');
      while (!gone()) await new Promise((r) => setTimeout(r, 20));
    },
    async stop() {
      if (options.unreaped) process.kill(pid, 'SIGTERM');
      else child.kill('SIGTERM');
      return exited;
    },
    reap() {
      if (options.unreaped) child.kill('SIGKILL');
    },
  };
}
