/**
 * One command table for every channel: each command runs on Telegram, Slack, Discord, the web chat
 * (over its HTTP API, signed in), the terminal chat and JSONL (against the emulators) and has the
 * same outcome everywhere, once each channel's markup and command spelling are taken off.
 */
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleChannel } from '../../src/channels/console/index.js';
import { JsonlChannel } from '../../src/channels/console/jsonl.js';
import { listedCommands } from '../../src/core/commands.js';
import { alice as discordAlice, type DiscordStack, startDiscordStack } from '../discord/stack.js';
import { slashCommand } from '../emulators/slack-payloads.js';
import { type Harness, startHarness, waitFor } from '../helpers/harness.js';
import { startWebApp, type WebApp } from '../helpers/web-app.js';
import { redeemLink, tabOf } from '../helpers/web-client.js';
import { ALICE, type SlackStack, startSlackStack } from '../slack/stack.js';
import { alice, startTelegramTest, type TelegramTest, texts } from '../telegram/setup.js';

/** Command lines run in order on every channel (state carries over: the model is set, then reset). */
const LINES = [
  'help',
  'start',
  'status',
  'stop',
  'new',
  'model',
  'model other-model',
  'model',
  'model default',
  'model two words',
  'rules',
  'rules revoke x',
  'mcp',
  'sethome',
  'jobs',
];

/** The outcome without a channel's markup, command spelling and "how to talk to me" line. */
function outcome(text: string): string {
  return text
    .replace(/\/switchboard /g, '/')
    .replace(/&amp;/g, '&')
    .replace(/[*_`]/g, '')
    .split('\n')
    .map((l) => l.replace(/^\s*[-•]\s+/, '').trim())
    .filter((l) => l && !/^(Anything else|Talk to me)/.test(l))
    .join('\n');
}

/** The web chat's HTML as text: a line per block, the tags dropped, the entities read. */
function htmlText(html: string): string {
  return html
    .replace(/<\/(p|li|h[1-6]|pre|blockquote|tr)>|<br\s*\/?>/g, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");
}

type Runner = (line: string) => Promise<string>;

/** A writable that keeps every write apart (one printed answer = one write). */
function recorder() {
  const writes: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      writes.push(chunk.toString());
      done();
    },
  });
  return { stream, writes };
}

describe('the command table on every channel', () => {
  let tg: TelegramTest;
  let slack: SlackStack;
  let dc: DiscordStack;
  let web: WebApp;
  let term: Harness;
  let jsonl: Harness;
  const runners: Record<string, Runner> = {};
  const results: Record<string, string[]> = {};

  beforeAll(async () => {
    tg = await startTelegramTest();
    runners.telegram = async (line) => {
      const before = texts(tg.emu, alice.id).length;
      tg.emu.sendText(alice, `/${line}`);
      const m = await waitFor(() => texts(tg.emu, alice.id)[before], `telegram answer to /${line}`);
      return m.plain;
    };

    slack = await startSlackStack('http');
    runners.slack = async (line) => {
      const res = await slack.emu.deliver('slash_commands', slashCommand({ user: ALICE, channel: 'D1', text: line }));
      expect(res.status).toBe(200);
      return (JSON.parse(res.body) as { text: string }).text;
    };

    dc = await startDiscordStack();
    runners.discord = async (line) => {
      const dm = dc.emu.dmChannel(discordAlice).id;
      const before = dc.emu.botMessages(dm).length;
      dc.emu.dm(discordAlice, `/${line}`);
      const m = await waitFor(() => dc.emu.botMessages(dm)[before], `discord answer to /${line}`);
      // Discord Markdown escapes punctuation with a backslash.
      return m.content.replace(/\\(.)/g, '$1');
    };

    web = await startWebApp('sb-commands-');
    const link = await web.app.signIn!.loginLink(web.app.port!, 'wendy', false);
    const tab = tabOf(web.base, (await redeemLink(link.url)).cookie);
    tab.csrf = (await tab.get('/api/session')).json.csrf;
    // The answers as the page gets them: the bot's text rows of the user's chat, in order.
    const { sql } = await import('kysely');
    const answers = async () =>
      (
        await sql<{ body: string }>`SELECT body FROM web_messages WHERE chat_key = 'wendy' ORDER BY id`.execute(
          web.app.core.db,
        )
      ).rows
        .map((r) => JSON.parse(r.body) as { kind: string; html?: string })
        .filter((b) => b.kind === 'text');
    runners.web = async (line) => {
      const before = (await answers()).length;
      const sent = await tab.post('/api/send', { thread: '', text: `/${line}` });
      expect(sent).toMatchObject({ status: 200, json: { status: 'command' } });
      const answer = await waitFor(async () => (await answers())[before], `web answer to /${line}`);
      return htmlText(answer.html ?? '');
    };

    const screen = recorder();
    const input = new PassThrough();
    term = await startHarness({
      channels: () => [new ConsoleChannel({ conversation: 'term', input, output: screen.stream, terminal: false })],
    });
    await waitFor(() => screen.writes.length, 'console banner');
    runners.console = async (line) => {
      const before = screen.writes.length;
      input.write(`/${line}\n`);
      return waitFor(() => screen.writes[before], `console answer to /${line}`);
    };

    const out = recorder();
    const jsonIn = new PassThrough();
    jsonl = await startHarness({
      channels: () => [new JsonlChannel({ conversation: 'script', input: jsonIn, output: out.stream })],
    });
    runners.jsonl = async (line) => {
      const before = out.writes.length;
      const [name, ...args] = line.split(' ');
      jsonIn.write(`${JSON.stringify({ type: 'command', name, args: args.join(' ') })}\n`);
      const raw = await waitFor(() => out.writes[before], `jsonl answer to ${line}`);
      const parsed = JSON.parse(raw) as { type: string; name: string; text: string; conversation: string };
      expect(parsed).toMatchObject({ type: 'command', name, conversation: 'script' });
      return parsed.text;
    };

    // The model endpoint lists the model that `/model other-model` switches to.
    for (const llm of [tg.llm, slack.llm, dc.llm, web.llm, term.llm, jsonl.llm])
      llm.models = ['test-model', 'other-model'];
    for (const [channel, run] of Object.entries(runners)) {
      results[channel] = [];
      for (const line of LINES) results[channel].push(outcome(await run(line)));
    }
  }, 150_000);

  afterAll(async () => {
    await tg?.close();
    await slack?.close();
    await dc?.close();
    await web?.close();
    await term?.close();
    await jsonl?.close();
  });

  it.each(LINES.map((line, i) => [line, i] as const))(
    '/%s has the same outcome on Telegram, Slack, Discord, the web chat, console and JSONL',
    (_line, i) => {
      const telegram = results.telegram?.[i] as string;
      expect(telegram.length).toBeGreaterThan(0);
      expect({
        slack: results.slack?.[i],
        discord: results.discord?.[i],
        web: results.web?.[i],
        console: results.console?.[i],
        jsonl: results.jsonl?.[i],
      }).toEqual({
        slack: telegram,
        discord: telegram,
        web: telegram,
        console: telegram,
        jsonl: telegram,
      });
    },
  );

  it('the outcomes are the commands’ own, not a shared fallback', () => {
    const t = results.telegram as string[];
    const at = (line: string) => t[LINES.indexOf(line)] as string;
    for (const c of listedCommands()) expect(at('help')).toContain(`/${c.name}`);
    expect(at('status')).toContain('Turn: idle');
    expect(at('stop')).toBe('Nothing is running.');
    expect(at('model other-model')).toBe('Model set to other-model.');
    expect(t[LINES.indexOf('model other-model') + 1]).toContain('Model: other-model');
    expect(at('model two words')).toMatch(/^A model name is one word/);
    expect(at('rules revoke x')).toBe('Usage: /rules, or /rules revoke ID');
    expect(at('sethome')).toContain('receives your notifications');
    expect(at('jobs')).toContain('No scheduled jobs');
  });
});
