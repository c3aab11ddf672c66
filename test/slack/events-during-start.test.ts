/**
 * Slack events that come in while switchboard starts: the HTTP server already listens (it answers
 * `url_verification` and health checks), the Slack channel is still starting. The event is held
 * until the channel runs and then handled — even Slack's last retry, which is never sent again.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SlackChannel } from '../../src/channels/slack/slack-channel.js';
import { Core } from '../../src/core/core.js';
import { HttpServer } from '../../src/http/server.js';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { eventCallback } from '../emulators/slack-payloads.js';
import { type SlackEmulator, startSlackEmulator } from '../emulators/slack.js';
import { testConfig, waitFor } from '../helpers/harness.js';
import { channelKinds } from '../../src/channels/registry.js';

const ALICE = 'UALICE';

describe('slack (HTTP): an event during start-up', () => {
  let emu: SlackEmulator;
  let llm: ScriptedLlm;
  let core: Core | undefined;
  let http: HttpServer | undefined;
  let dir: string;
  afterEach(async () => {
    await core?.close();
    await http?.close();
    await emu?.close();
    await llm?.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  it("is held until the channel runs and then answered, on Slack's last retry too", async () => {
    emu = await startSlackEmulator();
    llm = await startScriptedLlm();
    dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-slack-early-'));
    mkdirSync(path.join(dir, 'workspace'), { recursive: true });
    const config = testConfig(dir, llm.url, {
      slack: {
        bot_token: 'xoxb-emulator',
        signing_secret: emu.app.signingSecret,
        api_url: emu.apiUrl,
        allowed_users: [ALICE],
      },
    });
    const log = pino({ level: process.env.TEST_LOG ?? 'silent' });
    core = await Core.open({ config, log, channelKinds });
    http = new HttpServer(log);
    core.addChannel(new SlackChannel({ config, http, log, paths: core.paths }));
    const port = await http.listen(0, '127.0.0.1');
    emu.app.url = `http://127.0.0.1:${port}/slack/events`;
    emu.app.mode = 'http';

    // The channel's start waits on auth.test: held, the server listens and the channel does not run.
    const auth = emu.hold('auth.test');
    const starting = core.start();
    await auth.arrived;
    llm.push({ text: 'Answered after the start.' });
    const event = emu.userMessage({ channel: 'D1', user: ALICE, text: 'hello early', channelType: 'im' });
    const delivered = emu.deliver('events_api', eventCallback(event, { botUserId: emu.botUserId }), { retryNum: 3 });
    // Still starting a while later: the request is waiting, not refused.
    let answeredEarly: number | undefined;
    void delivered.then((r) => {
      answeredEarly = r.status;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(answeredEarly).toBeUndefined();
    auth.release();
    await starting;
    expect((await delivered).status).toBe(200);
    await waitFor(() => emu.botMessages('D1').some((m) => m.text.includes('Answered after the start.')), 'the answer');
    expect(llm.chatRequests()).toHaveLength(1);
  });
});
