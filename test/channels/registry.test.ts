/**
 * The channel registry: every channel declares itself (on or off for a configuration, how it is
 * built, its own allowed users, whether it is local, its doctor checks), the shared modules that
 * used to name platforms ask the registry instead, and nothing but the registry imports a
 * registered channel's folder from outside it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { channelKind, channelKinds, configuredKinds } from '../../src/channels/registry.js';
import { AccessControl } from '../../src/core/access.js';
import { configSchema } from '../../src/config.js';
import { configSections } from '../../src/config-sections.js';
import type { Db } from '../../src/store/db.js';

const root = path.resolve(import.meta.dirname, '../..');

/** Every import specifier of `text`: `import`/`export … from`, `import type`, side-effect imports and `import(…)`. */
function specifiers(text: string): string[] {
  const re =
    /\b(?:import|export)\s+(?:type\s+)?(?:[\w*\s{},]*?\s+from\s+)?['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g;
  return [...text.matchAll(re)].map((m) => (m[1] ?? m[2]) as string);
}

/** The imports in `file` (relative to the repository) of a registered channel's folder other than its own. */
function channelImports(file: string, text: string, names: readonly string[]): string[] {
  const found: string[] = [];
  for (const spec of specifiers(text)) {
    if (!spec.startsWith('.')) continue;
    const target = path.posix.join(path.posix.dirname(file), spec);
    for (const name of names) {
      const folder = `src/channels/${name}/`;
      if (target.startsWith(folder) && !file.startsWith(folder)) found.push(`${file} imports ${name}: ${spec}`);
    }
  }
  return found;
}

/** `text` without its comments (line and block), roughly: enough for a name check. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

function config(raw: Record<string, Record<string, unknown>> = {}) {
  return configSchema.parse({ workspace: { root: os.tmpdir() }, log: { level: 'silent' }, ...raw });
}

describe('channel registry', () => {
  it('names each channel once', () => {
    const names = channelKinds.map((k) => k.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(['telegram', 'slack', 'discord', 'web', 'console']));
  });

  it('each channel with settings declares its own section, and the configuration composes exactly that one', () => {
    const withConfig = channelKinds.filter((k) => k.config);
    expect(withConfig.map((k) => k.name)).toEqual(expect.arrayContaining(['telegram', 'slack', 'web']));
    for (const kind of withConfig) {
      expect(kind.config?.name, kind.name).toBe(kind.name);
      expect(configSections as readonly unknown[], kind.name).toContain(kind.config);
      expect(Object.keys(configSchema.shape), kind.name).toContain(kind.name);
    }
  });

  it('turns on the channels a configuration sets up: the web chat by default, platforms with their tokens', () => {
    const noWeb = { web: { enabled: false } };
    expect(configuredKinds(config(noWeb))).toEqual([]);
    expect(configuredKinds(config()).map((k) => k.name)).toEqual(['web']);
    expect(configuredKinds(config({ ...noWeb, telegram: { bot_token: '1:x' } })).map((k) => k.name)).toEqual([
      'telegram',
    ]);
    const all = config({
      telegram: { bot_token: '1:x' },
      slack: { bot_token: 'xoxb-1', signing_secret: 's' },
      discord: { bot_token: 'd' },
    });
    expect(configuredKinds(all).map((k) => k.name)).toEqual(['telegram', 'slack', 'discord', 'web']);
    for (const kind of configuredKinds(all)) expect(kind.create, kind.name).toBeTypeOf('function');
  });

  it('access control takes each channel’s own allowed users and its locality from its declaration', async () => {
    const cfg = config({
      telegram: { allowed_users: ['42'] },
      slack: { allowed_users: ['U1'] },
      discord: { allowed_users: '1234567890' },
    });
    // Only allowlisted users are asked about here: the pairing table is never reached.
    const access = new AccessControl(undefined as unknown as Db, cfg, channelKinds);
    expect(await access.isAllowed('telegram', '42')).toBe(true);
    expect(await access.isAllowed('slack', 'U1')).toBe(true);
    expect(await access.isAllowed('discord', '1234567890')).toBe(true);
    expect(await access.isAllowed('console', 'anyone')).toBe(true);
    // Web users exist only through the operator's login links: no pairing.
    expect(await access.isAllowed('web', 'carol')).toBe(true);
    expect(access.isLocal('console')).toBe(true);
    expect(access.isLocal('telegram')).toBe(false);
    expect(access.isLocal('no-such-channel')).toBe(false);
    expect(channelKind('telegram')?.allowedUsers?.(cfg)).toEqual(['42']);
  });

  it('the shared modules name no channel: no name as a string, no config section; they ask the registry', () => {
    // The platforms: every registered channel but the local terminal (whose name is also the
    // conversation name `chat` opens by default).
    const names = channelKinds.filter((k) => !k.local).map((k) => k.name);
    const platform = new RegExp(`\\b(${names.join('|')})\\b`, 'i');
    for (const file of ['src/main.ts', 'src/doctor.ts', 'src/core/access.ts', 'src/kit/pacer.ts']) {
      const text = readFileSync(path.join(root, file), 'utf8');
      for (const name of names) {
        expect(text, `${file} names ${name}`).not.toMatch(new RegExp(`['"\`]${name}['"\`:]`));
        expect(text, `${file} reads config.${name}`).not.toMatch(new RegExp(`config\\.${name}\\.`));
      }
      // In code: a comment may say which channel a neutral hook serves today.
      expect(withoutComments(text), `${file} names a platform`).not.toMatch(platform);
    }
  });

  it('no module outside a channel’s folder and its two registrations imports it: static, type-only or dynamic', () => {
    const names = channelKinds.map((k) => k.name);
    expect(names).toEqual(expect.arrayContaining(['telegram', 'slack', 'web', 'console']));
    const found: string[] = [];
    for (const file of sourceFiles(path.join(root, 'src'))) {
      const rel = path.relative(root, file).split(path.sep).join('/');
      if (rel === 'src/channels/registry.ts') continue;
      const text = readFileSync(file, 'utf8');
      // The configuration's list of sections imports each channel's config.ts, and only that.
      if (rel === 'src/config-sections.ts') {
        const configOnly = /^\.\/channels\/[a-z]+\/config\.js$/;
        for (const imported of channelImports(rel, text, names)) expect(imported.split(': ')[1]).toMatch(configOnly);
        continue;
      }
      found.push(...channelImports(rel, text, names));
    }
    expect(found).toEqual([]);
  });

  it('the import check finds each way of naming a channel’s module', () => {
    const text = [
      "import type { WebChannel } from './channels/web/index.js';",
      'import {',
      '  ConsoleChannel,',
      "} from './channels/console/index.js';",
      "export { slackKind } from './channels/slack/kind.js';",
      "const { webCommand } = await import('./channels/web/cli.js');",
      "let t: import('./channels/telegram/api.js').Api;",
      "import './channels/telegram/side-effect.js';",
      "import { channelKinds } from './channels/registry.js';",
      "import type { ChannelKind } from './kit/index.js';",
    ].join('\n');
    expect(channelImports('src/main.ts', text, ['telegram', 'slack', 'web', 'console'])).toEqual([
      'src/main.ts imports web: ./channels/web/index.js',
      'src/main.ts imports console: ./channels/console/index.js',
      'src/main.ts imports slack: ./channels/slack/kind.js',
      'src/main.ts imports web: ./channels/web/cli.js',
      'src/main.ts imports telegram: ./channels/telegram/api.js',
      'src/main.ts imports telegram: ./channels/telegram/side-effect.js',
    ]);
    // A channel's own files import each other freely.
    expect(channelImports('src/channels/web/kind.ts', "await import('./cli.js');", ['web'])).toEqual([]);
    expect(withoutComments('/** the web chat */\nconst a = 1; // web\n')).not.toMatch(/web/);
  });
});

describe('doctor checks contributed by each configured channel', () => {
  it('Discord checks its token with GET /users/@me', async () => {
    const { startDiscordEmulator } = await import('../emulators/discord.js');
    const emu = await startDiscordEmulator();
    try {
      const run = async (token: string) => {
        const cfg = config({ web: { enabled: false }, discord: { bot_token: token, api_root: emu.apiRoot } });
        return (await Promise.all(configuredKinds(cfg).map((k) => k.doctor?.(cfg) ?? []))).flat();
      };
      expect(await run(emu.token)).toEqual([
        { name: 'discord', ok: true, detail: expect.stringMatching(/^bot @switchboard/) },
      ]);
      const [bad] = await run('wrong');
      expect(bad).toMatchObject({ name: 'discord', ok: false });
      expect(bad?.detail).toMatch(/HTTP 401.*DISCORD_BOT_TOKEN/);
    } finally {
      await emu.close();
    }
  });

  it('each configured channel reports its own check against its platform; a refused token fails it', async () => {
    const { startTelegramEmulator } = await import('../emulators/telegram.js');
    const { startSlackEmulator } = await import('../emulators/slack.js');
    const tg = await startTelegramEmulator();
    const slack = await startSlackEmulator();
    try {
      const good = config({
        telegram: { bot_token: tg.token, api_root: tg.apiRoot },
        slack: { bot_token: 'xoxb-emulator', api_url: slack.apiUrl, signing_secret: 's' },
      });
      const checks = (await Promise.all(configuredKinds(good).map((k) => k.doctor?.(good) ?? []))).flat();
      expect(checks.map((c) => [c.name, c.ok])).toEqual([
        ['telegram', true],
        ['slack', true],
        ['slack streaming', true],
      ]);
      expect(checks[0]?.detail).toMatch(
        /^bot @.*, streaming by drafts in private chats, answers as rich messages, notices to one person in groups as ephemeral messages \(the old way if the server refuses them\)$/,
      );
      // Which way replies stream: the setting, or a server that does not know drafts.
      const edits = config({ telegram: { bot_token: tg.token, api_root: tg.apiRoot, streaming: 'edit' } });
      const [byEdit] = (await Promise.all(configuredKinds(edits).map((k) => k.doctor?.(edits) ?? []))).flat();
      expect(byEdit?.detail).toMatch(/streaming by edits \(telegram\.streaming = "edit"\), answers as rich messages, /);
      // How answers are sent: the setting, or a server that does not know rich messages.
      const html = config({ telegram: { bot_token: tg.token, api_root: tg.apiRoot, rich_messages: 'off' } });
      const [byHtml] = (await Promise.all(configuredKinds(html).map((k) => k.doctor?.(html) ?? []))).flat();
      expect(byHtml?.detail).toMatch(/, answers as HTML \(telegram\.rich_messages = "off"\), /);
      // Notices to one person in a group: the setting (no probe can tell without sending one).
      const noEphemeral = config({ telegram: { bot_token: tg.token, api_root: tg.apiRoot, ephemeral_notices: 'off' } });
      const [byAlert] = (
        await Promise.all(configuredKinds(noEphemeral).map((k) => k.doctor?.(noEphemeral) ?? []))
      ).flat();
      expect(byAlert?.detail).toMatch(
        /, notices to one person in groups as alerts and group messages \(telegram\.ephemeral_notices = "off"\)$/,
      );
      tg.forget('sendRichMessage');
      const [noRich] = (await Promise.all(configuredKinds(good).map((k) => k.doctor?.(good) ?? []))).flat();
      expect(noRich?.detail).toMatch(/, answers as HTML \(this Bot API server does not know sendRichMessage\), /);
      tg.forget('sendMessageDraft');
      const [lagging] = (await Promise.all(configuredKinds(good).map((k) => k.doctor?.(good) ?? []))).flat();
      expect(lagging?.detail).toMatch(
        /streaming by edits \(this Bot API server does not know sendMessageDraft\), answers as HTML/,
      );
      const bad = config({
        telegram: { bot_token: '1:wrong', api_root: tg.apiRoot },
        slack: { bot_token: 'xoxb-wrong', api_url: slack.apiUrl, signing_secret: 's' },
      });
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
