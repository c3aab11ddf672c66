import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SlackChannel } from '../../src/channels/slack/slack-channel.js';
import { Core } from '../../src/core/core.js';
import { HttpServer } from '../../src/http/server.js';
import { startSlackEmulator, type SlackEmulator } from '../emulators/slack.js';
import { testConfig } from '../helpers/harness.js';
import { channelKinds } from '../../src/channels/registry.js';

describe('Slack channel start-up', () => {
  let emu: SlackEmulator;
  let core: Core | undefined;
  let dir: string;
  afterEach(async () => {
    await core?.close();
    await emu?.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  async function build(slack: Record<string, unknown>) {
    emu = await startSlackEmulator();
    dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-slack-start-'));
    const config = testConfig(dir, 'http://127.0.0.1:9/v1', {
      slack: { api_url: emu.apiUrl, signing_secret: 's', ...slack },
    });
    const log = pino({ level: 'silent' });
    core = await Core.open({ config, log, channelKinds });
    const channel = new SlackChannel({ config, http: new HttpServer(log), log, paths: core.paths });
    return channel;
  }

  it('fails with a clear error when the bot token is refused', async () => {
    const channel = await build({ bot_token: 'xoxb-wrong' });
    await expect(channel.start(core!.channelRole)).rejects.toThrow(/slack\.bot_token\) was refused: .*invalid_auth/);
    expect(channel.health?.()).toContain('refused');
  });

  it('fails with a clear error when Socket Mode cannot connect', async () => {
    const channel = await build({ bot_token: 'xoxb-emulator', app_token: 'xapp-wrong' });
    await expect(channel.start(core!.channelRole)).rejects.toThrow(/Socket Mode could not connect .*invalid_auth/);
    expect(emu.socketCount()).toBe(0);
  });

  it('refuses to build without a bot token, or without a signing secret in HTTP mode', async () => {
    const channel = await build({ bot_token: 'xoxb-emulator' });
    expect(channel.name).toBe('slack');
    expect([...channel.capabilities]).toEqual(['attachments']);
    const config = testConfig(dir, 'http://127.0.0.1:9/v1', { slack: { bot_token: 'xoxb-x' } });
    const log = pino({ level: 'silent' });
    expect(() => new SlackChannel({ config, http: new HttpServer(log), log, paths: core!.paths })).toThrow(
      /signing_secret/,
    );
    const noToken = testConfig(dir, 'http://127.0.0.1:9/v1', { slack: { signing_secret: 's' } });
    expect(() => new SlackChannel({ config: noToken, http: new HttpServer(log), log, paths: core!.paths })).toThrow(
      /bot_token/,
    );
  });
});
