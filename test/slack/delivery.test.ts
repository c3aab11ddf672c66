// biome-ignore-all lint/suspicious/noExplicitAny: Slack payloads and Block Kit JSON are loosely typed by nature
import { afterEach, describe, expect, it } from 'vitest';
import { eventCallback } from '../emulators/slack-payloads.js';
import { ALICE, type SlackStack, startSlackStack, visibleText, waitFor } from './stack.js';

/** Every ``` in a block must pair up, or Slack shows the rest of the message as code. */
function fencesBalanced(text: string): boolean {
  return (text.match(/```/g) ?? []).length % 2 === 0;
}

describe.each(['http', 'socket'] as const)('Slack delivery (%s mode)', (mode) => {
  let stack: SlackStack;
  afterEach(async () => {
    await stack?.close();
  });

  it('processes the same event delivered three times once', async () => {
    stack = await startSlackStack(mode);
    stack.llm.push({ text: 'only once' }, { text: 'should never be used' });
    const ev = stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'hello' });
    const results = [];
    results.push(await stack.sendEvent(ev, { eventId: 'EvSAME1' }));
    results.push(await stack.sendEvent(ev, { eventId: 'EvSAME1', retryNum: 1 }));
    results.push(await stack.sendEvent(ev, { eventId: 'EvSAME1', retryNum: 2 }));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    await waitFor(() => stack.findBot('D1', 'only once').length, 'reply');
    await stack.quiesce();
    expect(stack.llm.chatRequests()).toHaveLength(1);
    expect(stack.emu.botMessages('D1')).toHaveLength(1);
    const inbox = await stack.core.db.selectFrom('messages').select('content').where('role', '=', 'user').execute();
    expect(inbox).toHaveLength(1);
  });

  it('still recognises a retried event after a restart', async () => {
    stack = await startSlackStack(mode);
    stack.llm.push({ text: 'answered before the restart' }, { text: 'must not be used' });
    const ev = stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'hello' });
    await stack.sendEvent(ev, { eventId: 'EvRESTART1' });
    await waitFor(() => stack.findBot('D1', 'answered before the restart').length, 'reply');
    await stack.quiesce();
    await stack.restart();
    const retry = await stack.sendEvent(ev, { eventId: 'EvRESTART1', retryNum: 1 });
    expect(retry.status).toBe(200);
    await stack.quiesce();
    expect(stack.llm.chatRequests()).toHaveLength(1);
    expect(stack.emu.botMessages('D1')).toHaveLength(1);
  });

  it('loses and duplicates nothing when chat.postMessage and chat.update answer 429', async () => {
    stack = await startSlackStack(mode);
    stack.emu.rateLimit('chat.postMessage', 2, '0');
    stack.emu.rateLimit('chat.update', 3, '0');
    const text = 'Rate limits are no reason to lose words: ' + Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    stack.llm.push({ text, chunkSize: 6, delayMs: 15 }, { text: 'second reply' });
    await stack.sendEvent(stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'go' }));
    await waitFor(() => stack.findBot('D1', 'w39').length, 'final text');
    await stack.sendEvent(stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'again' }));
    await waitFor(() => stack.findBot('D1', 'second reply').length, 'second reply');
    await stack.quiesce();
    const limited = stack.emu.calls.filter((c) => c.status === 429).map((c) => c.method);
    expect(limited.filter((m) => m === 'chat.postMessage')).toHaveLength(2);
    expect(limited.filter((m) => m === 'chat.update').length).toBeGreaterThan(0);
    const bots = stack.emu.botMessages('D1');
    expect(bots.map((m) => visibleText(m))).toEqual([text, 'second reply']);
  });

  it('keeps several threads apart and in order under rate limits', async () => {
    stack = await startSlackStack(mode);
    stack.llm.setHandler((body) => {
      const last = [...body.messages].reverse().find((m: any) => m.role === 'user');
      const topic = /topic (\d+)/.exec(String(last?.content))?.[1] ?? '?';
      return {
        text: `Answer for topic ${topic}: ` + Array.from({ length: 30 }, (_, i) => `t${topic}w${i}`).join(' '),
        chunkSize: 9,
        delayMs: 3,
      };
    });
    stack.emu.rateLimit('chat.postMessage', 3, '0');
    stack.emu.rateLimit('chat.update', 6, '0');
    const mentions = Array.from({ length: 4 }, (_, i) =>
      stack.emu.userMessage({ channel: `C${i}`, user: ALICE, text: `topic ${i}`, mention: true }),
    );
    await Promise.all(mentions.map((m) => stack.sendEvent(m)));
    for (const [i, m] of mentions.entries()) {
      await waitFor(() => stack.findBot(`C${i}`, `t${i}w29`, m.ts).length, `answer in thread ${i}`);
    }
    await stack.quiesce();
    for (const [i, m] of mentions.entries()) {
      const bots = stack.emu.botMessages(`C${i}`);
      expect(bots).toHaveLength(1);
      expect(bots[0]!.thread_ts).toBe(m.ts);
      expect(visibleText(bots[0]!)).toBe(
        `Answer for topic ${i}: ` + Array.from({ length: 30 }, (_, w) => `t${i}w${w}`).join(' '),
      );
    }
  });

  it('splits a 10 000-character reply with code and a table into valid messages of sections (markdown blocks off)', async () => {
    // The rendered messages (chat.update streaming); a native stream is Markdown Slack renders
    // (native-stream.test.ts); markdown blocks are markdown-blocks.test.ts's.
    stack = await startSlackStack(mode, { overrides: { slack: { streaming: 'update', markdown_blocks: 'off' } } });
    const para = (i: number) =>
      `Paragraph ${i}: ` + 'the quick brown fox jumps over the lazy dog & <friends> '.repeat(18);
    const code =
      '```python\n' +
      Array.from({ length: 90 }, (_, i) => `print("line ${i}", ${i} * 2)  # ${'x'.repeat(10)}`).join('\n') +
      '\n```';
    const table =
      '| name | value |\n|---|---:|\n' + Array.from({ length: 40 }, (_, i) => `| item${i} | ${i * 11} |`).join('\n');
    const md = [para(1), para(2), code, para(3), table, para(4), para(5), para(6)].join('\n\n');
    expect(md.length).toBeGreaterThan(10_000);
    stack.llm.push({ text: md, chunkSize: 400 });
    const mention = stack.emu.userMessage({ channel: 'C2', user: ALICE, text: 'long one please', mention: true });
    await stack.sendEvent(mention);
    await waitFor(() => stack.findBot('C2', 'Paragraph 6', mention.ts).length, 'end of the reply');
    await stack.quiesce();
    const bots = stack.emu.botMessages('C2', mention.ts);
    const blocks = bots.flatMap((m) => m.blocks ?? []);
    const sections = blocks.filter((b: any) => b.type === 'section').map((b: any) => b.text.text as string);
    // The table is a table block: 40 rows and the header, its cells as text.
    const tables = blocks.filter((b: any) => b.type === 'table');
    expect(tables).toHaveLength(1);
    const rows = tables[0].rows.map((r: any[]) => r.map((c) => c.text));
    expect(rows).toHaveLength(41);
    for (let i = 0; i < 40; i++) expect(rows[i + 1]).toEqual([`item${i}`, String(i * 11)]);
    expect(sections.length).toBeGreaterThan(3);
    for (const s of sections) {
      expect(s.length).toBeLessThanOrEqual(3000);
      expect(fencesBalanced(s)).toBe(true);
    }
    for (const m of bots) expect((m.blocks ?? []).length).toBeLessThanOrEqual(50);
    const all = sections.join('\n');
    for (let i = 0; i < 90; i++) expect(all).toContain(`print("line ${i}", ${i} * 2)`);
    expect(all).toContain('&amp; &lt;friends&gt;');
    for (let i = 1; i <= 6; i++) expect(all.split(`Paragraph ${i}:`)).toHaveLength(2);
  });

  it('ignores events from another workspace when slack.team_id is set', async () => {
    stack = await startSlackStack(mode, { overrides: { slack: { team_id: 'T0TEAM' } } });
    stack.llm.push({ text: 'from the right team' });
    const foreign = stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'hi' });
    const res = await stack.emu.deliver('events_api', eventCallback(foreign, { teamId: 'T0OTHER' }));
    expect(res.status).toBe(200);
    await stack.quiesce();
    expect(stack.llm.chatRequests()).toHaveLength(0);
    await stack.sendEvent(stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'hi again' }));
    await waitFor(() => stack.findBot('D1', 'from the right team').length, 'reply');
  });
});

describe('Slack HTTP endpoint', () => {
  let stack: SlackStack;
  afterEach(async () => {
    await stack?.close();
  });

  it('refuses a bad or stale signature with 401 and processes nothing', async () => {
    stack = await startSlackStack('http');
    const ev = stack.emu.userMessage({ channel: 'D1', user: ALICE, text: 'forged' });
    const bad = await stack.emu.deliver('events_api', eventCallback(ev), { badSignature: true });
    expect(bad.status).toBe(401);
    const stale = await stack.emu.deliver('events_api', eventCallback(ev), {
      timestampSec: Math.floor(Date.now() / 1000) - 600,
    });
    expect(stale.status).toBe(401);
    const res = await fetch(stack.emu.app.url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    await stack.quiesce();
    expect(stack.llm.chatRequests()).toHaveLength(0);
    expect(await stack.core.db.selectFrom('inbound_keys').selectAll().execute()).toHaveLength(0);
    // a correctly signed request still works afterwards
    stack.llm.push({ text: 'genuine' });
    await stack.sendEvent(ev);
    await waitFor(() => stack.findBot('D1', 'genuine').length, 'reply to the genuine request');
  });

  it('answers url_verification with the challenge', async () => {
    stack = await startSlackStack('http');
    const res = await stack.emu.deliver('events_api', { type: 'url_verification', token: 't', challenge: 'chal-123' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ challenge: 'chal-123' });
  });
});
