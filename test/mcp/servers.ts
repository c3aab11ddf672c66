/** Config entries that run the fixture MCP server (test/mcp/fixture-server.ts). */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { bundled } from '../helpers/bundle.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const FIXTURE = path.join(ROOT, 'test/mcp/fixture-server.ts');

/** A stdio server entry (raw TOML shape) whose server appends what it sees to `logFile`. */
export function stdioServer(logFile: string, extra: Record<string, unknown> = {}, env: Record<string, string> = {}) {
  return {
    command: process.execPath,
    args: [bundled(FIXTURE)],
    cwd: ROOT,
    env: { FIXTURE_LOG: logFile, ...env },
    ...extra,
  };
}

/** Lines the stdio fixture wrote. */
export function serverLog(logFile: string): string[] {
  return existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').filter(Boolean) : [];
}

/** Pids the fixture recorded at start, in order. */
export function serverPids(source: string | string[]): number[] {
  return (typeof source === 'string' ? serverLog(source) : source)
    .filter((l) => l.startsWith('pid '))
    .map((l) => Number(l.slice(4)));
}

/** True while a process exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
