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

/** The Slack channel as `switchboard start` wires it (src/main.ts), against the emulator. */
describe.each(['http', 'socket'] as const)('switchboard start with Slack (%s mode)', (mode) => {
  let app: App | null = null;
  let emu: SlackEmulator;
  let llm: ScriptedLlm;
  let dir: string;
  afterEach(async () => {
    await app?.close();
    await emu?.close();
    await llm?.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  it('answers a DM and reports healthy on /healthz', async () => {
    emu = await startSlackEmulator();
    llm = await startScriptedLlm();
    dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-slack-main-'));
    mkdirSync(path.join(dir, 'workspace'));
    const config = testConfig(dir, llm.url, {
      slack: {
        bot_token: 'xoxb-emulator',
        app_token: mode === 'socket' ? 'xapp-emulator' : undefined,
        signing_secret: emu.app.signingSecret,
        api_url: emu.apiUrl,
        allowed_users: ['UALICE'],
      },
    });
    app = await startServer(config, pino({ level: 'silent' }));
    expect(app).not.toBeNull();
    const base = `http://127.0.0.1:${app!.port}`;
    emu.app.url = `${base}/slack/events`;
    emu.app.mode = mode;
    if (mode === 'socket') await waitFor(() => emu.socketCount() > 0, 'socket');
    const health = await fetch(`${base}/healthz`);
    expect([health.status, await health.text()]).toEqual([200, 'ok\n']);

    llm.push({ text: 'hello from main' });
    const ev = emu.userMessage({ channel: 'D1', user: 'UALICE', text: 'hi' });
    const res = await emu.deliver('events_api', eventCallback(ev));
    expect(res.status).toBe(200);
    await waitFor(() => emu.botMessages('D1').some((m) => m.text.includes('hello from main')), 'reply');
    // /metrics counts the turn in Prometheus text format.
    await waitFor(
      async () => (await (await fetch(`${base}/metrics`)).text()).includes('switchboard_turns_total{status="done"} 1'),
      'turn counted',
    );
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await metrics.text()).toContain('switchboard_model_rounds_total{outcome="ok"} 1');
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    // send_attachment can be switched on (named in the system prompt's deferred line), send_voice_message cannot
    const system = llm.chatRequests()[0]!.body.messages[0].content as string;
    expect(system).toContain('send (send_attachment)');
    expect(system).not.toContain('send_voice_message');
  });
});
