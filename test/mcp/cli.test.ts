/**
 * The MCP client in the real CLI process: `switchboard mcp list`, exit 2 on bad MCP config, a call
 * over JSONL, and stdio servers dying with switchboard — on SIGTERM and on SIGKILL (no orphans).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { waitFor } from '../helpers/harness.js';
import { spawnJsonl } from '../helpers/jsonl-process.js';
import { alive, serverPids, stdioServer } from './servers.js';
import { testDatabaseUrl } from '../helpers/test-db.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');
let llm: ScriptedLlm;
let dir: string;
let env: Record<string, string>;
let n = 0;

beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-mcp-cli-'));
  mkdirSync(path.join(dir, 'ws'));
  env = {
    DATABASE_URL: testDatabaseUrl(dir),
    SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: 'k',
    LOG_LEVEL: 'silent',
  };
});
afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** Write an mcpServers file with one stdio fixture `fx`; returns [config file, server log]. */
function mcpJson(serverEnv: Record<string, string> = {}): [string, string] {
  n++;
  const log = path.join(dir, `server-${n}.log`);
  const cfg = path.join(dir, `mcp-${n}.json`);
  writeFileSync(cfg, JSON.stringify({ mcpServers: { fx: stdioServer(log, {}, serverEnv) } }));
  return [cfg, log];
}

function cli(args: string[], extra: Record<string, string> = {}) {
  return spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env, ...extra },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('switchboard with MCP servers', () => {
  it('mcp list shows each server with its state and tools; a broken server fails the listing', () => {
    const [cfg] = mcpJson();
    const ok = cli(['mcp', 'list', '--mcp-config', cfg]);
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/^mcp:fx \[stdio\] ready: 9 tools\n {2}mcp__fx__echo, mcp__fx__image, /);
    expect(ok.stdout).toContain('refused mcp__fx__dotted_name');
    const broken = path.join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify({ mcpServers: { gone: { url: 'http://127.0.0.1:9/mcp' } } }));
    const bad = cli(['mcp', 'list'], { SWITCHBOARD_MCP_CONFIG: broken });
    expect(bad.status).toBe(1);
    // The failure names the host and the cause in words, not a bare "fetch failed".
    expect(bad.stdout).toMatch(/^mcp:gone \[http\] failed: 0 tools — 127\.0\.0\.1:9: bad port\n/);
  });

  it('exits 2 with one line naming the key of a bad server', () => {
    const both = path.join(dir, 'both.json');
    writeFileSync(both, JSON.stringify({ mcpServers: { x: { command: 'a', url: 'http://h/' } } }));
    const r = cli(['mcp', 'list', '--mcp-config', both]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`config: ${both}: mcpServers.x: set either command (stdio) or url (HTTP), not both\n`);
    const toml = path.join(dir, 'bad.toml');
    writeFileSync(toml, '[mcp.servers."a.b"]\ncommand = "x"\n');
    const t = cli(['chat', '--jsonl', '--config', toml]);
    expect(t.status).toBe(2);
    expect(t.stderr).toMatch(/^config: mcp\.servers\.a\.b \(in .*bad\.toml\): server names may only use/);
  });

  it('doctor reports each MCP server', () => {
    const [cfg] = mcpJson();
    // spawnSync blocks this process, so the model endpoint here must be one nobody answers.
    const r = cli(['doctor', '--mcp-config', cfg], { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(r.stdout).toMatch(/^ok +mcp fx: stdio, 9 tools, 1 refused$/m);
  });

  it('runs an MCP tool over JSONL, and its server exits with switchboard on SIGTERM', async () => {
    const [cfg, log] = mcpJson();
    llm.push({ toolCalls: [{ name: 'mcp__fx__echo', arguments: '{"text":"jsonl"}' }] }, { text: 'done' });
    const p = spawnJsonl({ ...env, SWITCHBOARD_MCP_CONFIG: cfg }, ['--conversation', 'mcp-term']);
    p.send({ type: 'message', text: 'echo please' });
    const ask = await p.waitForLine((l) => l.type === 'approval_requested', 'approval');
    expect(ask.tool).toBe('mcp__fx__echo');
    p.send({ type: 'approve', id: ask.id, scope: 'once' });
    const fin = await p.waitForLine((l) => l.type === 'tool_finished', 'tool_finished');
    expect(fin).toMatchObject({ name: 'mcp__fx__echo', status: 'done', summary: 'echo: jsonl' });
    await p.waitForLine((l) => l.type === 'turn_done', 'turn_done');
    const [pid] = serverPids(log);
    expect(pid && alive(pid)).toBe(true);
    expect(await p.stop()).toBe(0);
    await waitFor(() => !alive(pid as number), 'server gone after SIGTERM', 5_000);
  });

  it('leaves no orphan behind after SIGKILL, even a server that ignores its closed stdin', async () => {
    const [cfg, log] = mcpJson({ FIXTURE_STUBBORN: '1' });
    const child = spawn(process.execPath, [BIN, 'chat', '--jsonl', '--conversation', 'mcp-kill'], {
      env: { ...process.env, ...env, SWITCHBOARD_MCP_CONFIG: cfg },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const pid = await waitFor(() => serverPids(log)[0], 'server started', 15_000);
    expect(alive(pid)).toBe(true);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    await waitFor(() => !alive(pid), 'server gone after SIGKILL of switchboard', 8_000);
  });
});
