import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type App, startServer } from '../../src/main.js';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { startSlackEmulator, type SlackEmulator } from '../emulators/slack.js';
import { eventCallback } from '../emulators/slack-payloads.js';
import { testConfig, waitFor } from '../helpers/harness.js';

describe('HTTP endpoints of switchboard start', () => {
  let app: App | null = null;
  let emu: SlackEmulator;
  let llm: ScriptedLlm;
  let dir: string;
  afterEach(async () => {
    await app?.close();
    await emu?.close();
    await llm?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves Prometheus metrics that count turns, and 404 elsewhere', async () => {
    emu = await startSlackEmulator();
    llm = await startScriptedLlm();
    dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-http-'));
    mkdirSync(path.join(dir, 'workspace'));
    const config = testConfig(dir, llm.url, {
      slack: { bot_token: 'xoxb-emulator', signing_secret: emu.app.signingSecret, api_url: emu.apiUrl, allowed_users: ['UALICE'] },
    });
    app = await startServer(config, pino({ level: 'silent' }));
    const base = `http://127.0.0.1:${app!.port}`;
    emu.app.url = `${base}/slack/events`;
    emu.app.mode = 'http';
    llm.push({ text: 'counted' });
    await emu.deliver('events_api', eventCallback(emu.userMessage({ channel: 'D1', user: 'UALICE', text: 'hi' })));
    await waitFor(() => emu.botMessages('D1').some((m) => m.text.includes('counted')), 'reply');
    await waitFor(async () => (await (await fetch(`${base}/metrics`)).text()).includes('switchboard_turns_total{status="done"} 1'), 'turn counted');
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await metrics.text();
    expect(text).toContain('switchboard_model_rounds_total{outcome="ok"} 1');
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });

  it('returns null (console chat) when no platform channel is configured', async () => {
    llm = await startScriptedLlm();
    dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-http-'));
    expect(await startServer(testConfig(dir, llm.url), pino({ level: 'silent' }))).toBeNull();
  });
});
