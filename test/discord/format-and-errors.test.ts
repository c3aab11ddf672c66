/** Discord's Markdown, its cards' buttons, its button payloads and its failure classes, and a 429 end to end. */
import { afterEach, describe, expect, it } from 'vitest';
import { decodeCustomId, encodeCustomId } from '../../src/channels/discord/codec.js';
import { componentsOf } from '../../src/channels/discord/emitter.js';
import { discordMessages, escapeDiscord } from '../../src/channels/discord/format.js';
import { classifyDiscordError } from '../../src/channels/discord/surface.js';
import { parseMarkdown } from '../../src/delivery/render.js';
import { alice, type DiscordStack, startDiscordStack, waitFor, waitForMessage } from './stack.js';

describe('discord: format', () => {
  it('keeps Markdown Discord renders, escapes text, draws tables as a grid in a code block', () => {
    const [out] = discordMessages(parseMarkdown('**bold** and `code` <@123> *x*\n\n| a | b |\n|---|---|\n| 1 | 2 |'));
    expect(out).toContain('**bold** and `code` \\<@123\\> *x*');
    expect(out).toContain('```\na | b\n--+--\n1 | 2\n```');
    expect(escapeDiscord('- not a list # _x_')).toBe('\\- not a list \\# \\_x\\_');
  });

  it('cuts a code block too long for one message into fenced pieces with its language', () => {
    const code = Array.from({ length: 200 }, (_, i) => `line ${i} ${'x'.repeat(20)}`).join('\n');
    const parts = discordMessages(parseMarkdown(`\`\`\`ts\n${code}\n\`\`\``));
    expect(parts.length).toBeGreaterThan(2);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(2000);
      expect(p.startsWith('```ts\n') && p.endsWith('\n```')).toBe(true);
    }
    expect(parts.map((p) => p.slice(6, -4)).join('\n')).toBe(code);
  });

  it('encodes buttons in custom_id within 100 characters, rows of at most 5; anything else decodes to null', () => {
    const action = { kind: 'question' as const, id: 'q-1', index: 3 };
    expect(decodeCustomId(encodeCustomId(action))).toEqual(action);
    expect(decodeCustomId('q:q-1:3')).toBeNull();
    expect(decodeCustomId(`sb:${'x'.repeat(120)}`)).toBeNull();
    const row = Array.from({ length: 7 }, (_, i) => ({ label: `b${i}`, action: { ...action, index: i } }));
    expect(componentsOf([row]).map((r) => r.components.length)).toEqual([5, 2]);
  });
});

describe('discord: failure classes', () => {
  it('tells rate limits, gone messages and refusals apart', async () => {
    const { DiscordAPIError, HTTPError, RateLimitError } = await import('@discordjs/rest');
    const limited = new RateLimitError({
      timeToReset: 1500,
      limit: 5,
      method: 'POST',
      hash: 'h',
      url: 'u',
      route: '/channels/:id/messages',
      majorParameter: '1',
      global: false,
      retryAfter: 1500,
      sublimitTimeout: 0,
      scope: 'user',
    });
    expect(classifyDiscordError(limited)).toMatchObject({ kind: 'transient', retryAfterMs: 1500 });
    const api = (status: number, code: number) =>
      new DiscordAPIError({ code, message: 'm' }, code, status, 'PATCH', 'u', { body: undefined, files: undefined });
    expect(classifyDiscordError(api(404, 10008)).kind).toBe('gone');
    expect(classifyDiscordError(api(403, 50007)).kind).toBe('permanent');
    expect(classifyDiscordError(api(400, 50035)).kind).toBe('permanent');
    expect(classifyDiscordError(api(502, 0)).kind).toBe('transient');
    expect(
      classifyDiscordError(new HTTPError(503, 'Service Unavailable', 'GET', 'u', { body: undefined, files: undefined }))
        .kind,
    ).toBe('transient');
    expect(classifyDiscordError(new TypeError('fetch failed'))).toMatchObject({ kind: 'transient', unanswered: true });
  });
});

describe('discord: delivery under errors', () => {
  let s: DiscordStack | null = null;
  afterEach(async () => {
    await s?.close();
    s = null;
  });

  it('a 429 on the post is waited out (retry_after) and the answer arrives once', async () => {
    s = await startDiscordStack();
    s.emu.rateLimitNext('POST', /\/channels\/\d+\/messages$/, 0.3);
    s.llm.push({ text: 'after the limit' });
    s.emu.dm(alice, 'hi');
    const dm = s.emu.dmChannel(alice).id;
    await waitForMessage(s.emu, dm, (c) => c === 'after the limit', 'the answer');
    await waitFor(
      async () =>
        (await s?.h.core.db.selectFrom('deliveries').select('status').execute())?.every(
          (r) => r.status === 'delivered',
        ),
      'settled',
    );
    expect(s.emu.botMessages(dm)).toHaveLength(1);
    expect(s.emu.requests.filter((r) => r === `POST /channels/${dm}/messages`)).toHaveLength(2);
  });
});
