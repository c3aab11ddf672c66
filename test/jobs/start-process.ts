/** Runs `switchboard start` as a child process (for SIGKILL tests) and reads its log lines. */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { CHILD_START_MS } from '../helpers/budgets.js';
import { waitFor } from '../helpers/harness.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');

/** A running `switchboard start`. */
export interface StartProcess {
  child: ChildProcess;
  port: number;
  logs: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Spawn `switchboard start` with `env` and wait until it logs that it started (within {@link CHILD_START_MS}). */
export async function spawnStart(env: Record<string, string>): Promise<StartProcess> {
  const child = spawn(process.execPath, [BIN, 'start'], {
    env: { ...process.env, SWITCHBOARD_HTTP_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let port = 0;
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (entry.msg === 'switchboard started' && typeof entry.port === 'number') port = entry.port;
    } catch {
      logs.push({ msg: line });
    }
  });
  await waitFor(() => port || (child.exitCode !== null ? -1 : 0), 'switchboard started', CHILD_START_MS);
  if (port <= 0) throw new Error(`switchboard start exited: ${JSON.stringify(logs.slice(-5))}`);
  return {
    child,
    port,
    logs,
    exited,
    async kill(signal = 'SIGKILL') {
      child.kill(signal);
      return exited;
    },
  };
}
