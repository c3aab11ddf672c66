/**
 * The channel registry: every channel declares itself (on or off for a configuration, how it is
 * built, its own allowed users, whether it is local, its doctor checks), and the shared modules
 * that used to name platforms now ask the registry instead.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { channelKind, channelKinds, configuredKinds } from '../../src/channels/registry.js';
import { AccessControl, isLocalChannel } from '../../src/core/access.js';
import { configSchema } from '../../src/config.js';
import type { Db } from '../../src/store/db.js';

const root = path.resolve(import.meta.dirname, '../..');

function config(raw: Record<string, Record<string, unknown>> = {}) {
  return configSchema.parse({ workspace: { root: os.tmpdir() }, log: { level: 'silent' }, ...raw });
}

describe('channel registry', () => {
  it('names each channel once', () => {
    const names = channelKinds.map((k) => k.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(['telegram', 'slack', 'console']));
  });

  it('turns on the channels a configuration sets up, and none without tokens', () => {
    expect(configuredKinds(config())).toEqual([]);
    expect(configuredKinds(config({ telegram: { bot_token: '1:x' } })).map((k) => k.name)).toEqual(['telegram']);
    const both = config({ telegram: { bot_token: '1:x' }, slack: { bot_token: 'xoxb-1', signing_secret: 's' } });
    expect(configuredKinds(both).map((k) => k.name)).toEqual(['telegram', 'slack']);
    for (const kind of configuredKinds(both)) expect(kind.create, kind.name).toBeTypeOf('function');
  });

  it('access control takes each channel’s own allowed users and its locality from its declaration', async () => {
    const cfg = config({ telegram: { allowed_users: ['42'] }, slack: { allowed_users: ['U1'] } });
    // Only allowlisted users are asked about here: the pairing table is never reached.
    const access = new AccessControl(undefined as unknown as Db, cfg);
    expect(await access.isAllowed('telegram', '42')).toBe(true);
    expect(await access.isAllowed('slack', 'U1')).toBe(true);
    expect(await access.isAllowed('console', 'anyone')).toBe(true);
    expect(isLocalChannel('console')).toBe(true);
    expect(isLocalChannel('telegram')).toBe(false);
    expect(isLocalChannel('no-such-channel')).toBe(false);
    expect(channelKind('telegram')?.allowedUsers?.(cfg)).toEqual(['42']);
  });

  it('the shared modules name no server channel: they ask the registry', () => {
    const servers = channelKinds.filter((k) => !k.local).map((k) => k.name);
    for (const file of ['src/main.ts', 'src/doctor.ts', 'src/core/access.ts', 'src/channels/pacer.ts']) {
      const text = readFileSync(path.join(root, file), 'utf8');
      for (const name of servers) expect(text, `${file} names ${name}`).not.toMatch(new RegExp(`\\b${name}\\b`, 'i'));
    }
  });
});

describe('doctor checks contributed by each configured channel', () => {
  it('each configured channel reports its own check against its platform; a refused token fails it', async () => {
    const { startTelegramEmulator } = await import('../emulators/telegram.js');
    const { startSlackEmulator } = await import('../emulators/slack.js');
    const tg = await startTelegramEmulator();
    const slack = await startSlackEmulator();
    try {
      const good = config({ telegram: { bot_token: tg.token, api_root: tg.apiRoot }, slack: { bot_token: 'xoxb-emulator', api_url: slack.apiUrl, signing_secret: 's' } });
      const checks = (await Promise.all(configuredKinds(good).map((k) => k.doctor?.(good) ?? []))).flat();
      expect(checks.map((c) => [c.name, c.ok])).toEqual([
        ['telegram', true],
        ['slack', true],
      ]);
      expect(checks[0]?.detail).toMatch(/^bot @/);
      const bad = config({ telegram: { bot_token: '1:wrong', api_root: tg.apiRoot }, slack: { bot_token: 'xoxb-wrong', api_url: slack.apiUrl, signing_secret: 's' } });
      const refused = (await Promise.all(configuredKinds(bad).map((k) => k.doctor?.(bad) ?? []))).flat();
      expect(refused.map((c) => c.ok)).toEqual([false, false]);
      expect(refused[0]?.detail).toMatch(/refused getMe/);
      expect(refused[1]?.detail).toMatch(/refused auth\.test for the bot token \(SLACK_BOT_TOKEN\): invalid_auth/);
    } finally {
      await tg.close();
      await slack.close();
    }
  });
});
