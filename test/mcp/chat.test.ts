/** Where people see MCP servers: `/mcp` in Telegram, and the detail lines of `/healthz`. */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type App, startServer } from '../../src/main.js';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { startTelegramEmulator, type TelegramEmulator } from '../emulators/telegram.js';
import { testConfig } from '../helpers/harness.js';
import { alice, startTelegramTest, type TelegramTest, waitForText } from '../telegram/setup.js';
import { type HttpFixture, startHttpFixture } from './fixture-server.js';

let t: TelegramTest | null = null;
let fixture: HttpFixture | null = null;
let app: App | null = null;
let emu: TelegramEmulator | null = null;
let llm: ScriptedLlm | null = null;
let dir: string | null = null;
afterEach(async () => {
  await t?.close();
  await app?.close();
  await emu?.close();
  await llm?.close();
  await fixture?.close();
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  t = app = emu = llm = fixture = dir = null;
});

const servers = (url: string) => ({ web: { url }, gone: { url: 'http://127.0.0.1:9/mcp' } });

describe('MCP status in chat and on /healthz', () => {
  it('/mcp lists each server with its state and tools', async () => {
    fixture = await startHttpFixture();
    t = await startTelegramTest({ overrides: { mcp: { servers: servers(fixture.url) } } });
    t.emu.sendText(alice, '/mcp');
    const reply = await waitForText(t.emu, alice.id, (p) => p.startsWith('MCP servers'), '/mcp reply');
    expect(reply.plain).toContain('mcp:web [http] ready: 9 tools');
    expect(reply.plain).toContain('mcp__web__echo');
    expect(reply.plain).toMatch(/mcp:gone \[http\] (failed|connecting): 0 tools/);
    expect(t.llm.chatRequests()).toHaveLength(0);
  });

  it('/healthz stays 200 with a failing MCP server and names each server in its detail', async () => {
    fixture = await startHttpFixture();
    emu = await startTelegramEmulator();
    llm = await startScriptedLlm();
    dir = mkdtempSync(path.join(os.tmpdir(), 'sb-mcp-health-'));
    mkdirSync(path.join(dir, 'workspace'));
    const config = testConfig(dir, llm.url, {
      telegram: { bot_token: emu.token, api_root: emu.apiRoot },
      mcp: { servers: servers(fixture.url) },
    });
    app = await startServer(config, pino({ level: 'silent' }));
    const health = await fetch(`http://127.0.0.1:${app?.port}/healthz`);
    const body = await health.text();
    expect(health.status).toBe(200);
    expect(body).toMatch(
      /^ok\nmcp:web \[http\] ready: 9 tools\n {2}refused mcp__web__dotted_name: .*\nmcp:gone \[http\] (failed|connecting): 0 tools/,
    );
  });
});
