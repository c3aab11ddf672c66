/** Runs `switchboard chat --jsonl` as a child process and reads its JSON lines. */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');

export interface JsonlProcess {
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

/** Spawn the JSONL chat with `env` added to the environment. */
export function spawnJsonl(env: Record<string, string>, args: string[] = []): JsonlProcess {
  const child = spawn(process.execPath, [BIN, 'chat', '--jsonl', ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: any[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => {
    lines.push(JSON.parse(l));
  });
  createInterface({ input: child.stderr }).on('line', (l) => stderr.push(l));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    lines,
    stderr,
    child,
    exited,
    send: (obj) => child.stdin.write(`${JSON.stringify(obj)}\n`),
    sendRaw: (line) => child.stdin.write(`${line}\n`),
    endInput: () => child.stdin.end(),
    async waitForLine(pred, what, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = lines.find(pred);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(lines)}; stderr ${stderr.join('\n')}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
