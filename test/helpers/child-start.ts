/**
 * `switchboard start` as a child process over a given database, for kill tests: start it, wait
 * until it serves, SIGKILL it at the awkward moment, start it again over the same files.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
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
export function childEnv(dir: string, modelUrl: string, extraToml: string, channelEnv: Record<string, string>): Record<string, string> {
  mkdirSync(path.join(dir, 'ws'), { recursive: true });
  return {
    SWITCHBOARD_CONFIG: writeConfig(dir, extraToml),
    ...channelEnv,
    OPENAI_BASE_URL: modelUrl,
    OPENAI_API_KEY: 'test-key',
    SWITCHBOARD_MODEL: 'test-model',
    DATABASE_URL: testDatabaseUrl(dir, 'db'),
    SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
  };
}

/** Start `switchboard start` with `env` and wait for its "switchboard started" line. */
export async function startProcess(env: Record<string, string>, timeoutMs = 20_000): Promise<StartedProcess> {
  const child = spawn(process.execPath, [BIN, 'start'], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  createInterface({ input: child.stderr as NonNullable<ChildProcess['stderr']> }).on('line', (line) => {
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
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
