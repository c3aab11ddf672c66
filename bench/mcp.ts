/**
 * MCP client figures against the fixture server (test/mcp/fixture-server.ts): time to connect and
 * list tools over stdio (a node + tsx child behind the group leader) and over Streamable HTTP on
 * loopback, and the median round trip of a tool call through the registry tool.
 * Run alone: `node --import tsx bench/mcp.ts`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { mcpServerSchema } from '../src/config-mcp.js';
import { McpToolSource } from '../src/mcp/source.js';
import { startHttpFixture } from '../test/mcp/fixture-server.js';
import { FIXTURE, ROOT } from '../test/mcp/servers.js';
import { benchContext, median } from './tool-context.js';

const CALLS = 200;

async function measure(
  name: string,
  raw: Record<string, unknown>,
  ctx: Awaited<ReturnType<typeof benchContext>>,
): Promise<void> {
  const source = new McpToolSource('bench', mcpServerSchema.parse(raw), {
    connectTimeoutMs: 30_000,
    maxRetryMs: 60_000,
    maxResultChars: 50_000,
    log: pino({ level: 'silent' }),
    version: 'bench',
  });
  const t0 = performance.now();
  await source.connect();
  const connectMs = performance.now() - t0;
  const echo = (await source.listTools()).find((t) => t.name === 'mcp__bench__echo');
  if (!echo) throw new Error(`${name}: no echo tool (${source.status().error ?? 'not connected'})`);
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const s = performance.now();
    await echo.execute({ text: `n${i}` }, ctx);
    times.push(performance.now() - s);
  }
  const pid = source.connection.pid;
  const leaderRss = pid
    ? Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim()) / 1024
    : null;
  await source.close();
  console.log(
    `mcp ${name}: connect + list ${connectMs.toFixed(0)} ms; tool call median ${median(times).toFixed(2)} ms ` +
      `(p95 ${times.sort((a, b) => a - b)[Math.floor(CALLS * 0.95)]?.toFixed(2)} ms, ${CALLS} calls)` +
      (leaderRss ? `; group leader RSS ${leaderRss.toFixed(0)} MB` : ''),
  );
}

/** Connect over both transports and time calls. */
export async function run(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-bench-mcp-'));
  const ws = path.join(tmp, 'ws');
  fs.mkdirSync(ws);
  const ctx = await benchContext(ws, tmp);
  const http = await startHttpFixture();
  try {
    await measure('stdio', { command: process.execPath, args: ['--import', 'tsx', FIXTURE], cwd: ROOT }, ctx);
    await measure('http', { url: http.url }, ctx);
  } finally {
    await http.close();
    await ctx.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
