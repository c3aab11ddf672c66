/** Runs `switchboard chat --jsonl` as a child process and reads its JSON lines. */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { LINE_WAIT_MS } from './budgets.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');

export interface JsonlProcess {
  /** The pid of the switchboard process itself (with `unreaped`, not the pid of `child`). */
  pid: number;
  lines: any[];
  stderr: string[];
  send(obj: unknown): void;
  sendRaw(line: string): void;
  waitForLine(pred: (l: any) => boolean, what: string, timeoutMs?: number): Promise<any>;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  endInput(): void;
  exited: Promise<number | null>;
  child: ChildProcessWithoutNullStreams;
}

/**
 * Spawn the JSONL chat with `env` added to the environment. With `unreaped`, it runs under a
 * parent that never waits for it (a shell that `exec`s into `sleep`): once killed, it stays a
 * zombie (its pid still exists) until that parent ends — as under a supervisor slow to reap, or a
 * script that kills and restarts without waiting. `child` is then that parent; `exited` resolves
 * when the switchboard process is dead (a zombie), with no exit code. `bin` runs another copy of
 * bin/switchboard.js (an image-like folder).
 */
export function spawnJsonl(
  env: Record<string, string>,
  args: string[] = [],
  options: { unreaped?: boolean; bin?: string } = {},
): JsonlProcess {
  const bin = options.bin ?? BIN;
  const command = [bin, 'chat', '--jsonl', ...args].map(shellQuote).join(' ');
  const child = options.unreaped
    ? spawn(
        'sh',
        [
          '-c',
          `exec 3<&0; ${shellQuote(process.execPath)} ${command} <&3 3<&- & echo "pid=$!" >&2; exec sleep 600 <&-`,
        ],
        {
          env: { ...process.env, LOG_LEVEL: 'warn', ...env },
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      )
    : spawn(process.execPath, [bin, 'chat', '--jsonl', ...args], {
        env: { ...process.env, LOG_LEVEL: 'warn', ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
  const lines: any[] = [];
  const stderr: string[] = [];
  let pid = child.pid ?? 0;
  createInterface({ input: child.stdout }).on('line', (l) => {
    lines.push(JSON.parse(l));
  });
  let gotPid: () => void = () => {};
  const pidKnown = new Promise<void>((resolve) => {
    gotPid = resolve;
  });
  createInterface({ input: child.stderr }).on('line', (l) => {
    const m = options.unreaped ? /^pid=(\d+)$/.exec(l) : null;
    if (m) {
      pid = Number(m[1]);
      gotPid();
    } else stderr.push(l);
  });
  const exited = options.unreaped
    ? pidKnown.then(async () => {
        while (!isDeadOrZombie(pid)) await new Promise((r) => setTimeout(r, 20));
        return null;
      })
    : new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    get pid() {
      return pid;
    },
    lines,
    stderr,
    child,
    exited,
    send: (obj) => child.stdin.write(`${JSON.stringify(obj)}\n`),
    sendRaw: (line) => child.stdin.write(`${line}\n`),
    endInput: () => child.stdin.end(),
    async waitForLine(pred, what, timeoutMs = LINE_WAIT_MS) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = lines.find(pred);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(lines)}; stderr ${stderr.join('\n')}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop() {
      if (options.unreaped) process.kill(pid, 'SIGTERM');
      else child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Whether `pid` is gone or a zombie (Linux: state Z or X in /proc/<pid>/stat). */
function isDeadOrZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    return true;
  }
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
