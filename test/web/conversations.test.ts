/**
 * What a user does to a web conversation as a whole, over real HTTP against `startServer`:
 * rename and delete (CSRF like every change, refused for anyone else's conversation, followed by
 * every open stream), a tool call's output read from its line (the owner's only), the `at` time
 * of each row, and the `ready` mark after the stored history.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, startServer } from '../../src/main.js';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { testConfig, waitFor } from '../helpers/harness.js';
import { type ChatStream, openStream, redeemLink, type Tab, tabOf } from '../helpers/web-client.js';

let app: App;
let llm: ScriptedLlm;
let dir: string;
let base: string;
const streams: ChatStream[] = [];

beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-webconv-'));
  mkdirSync(path.join(dir, 'workspace'));
  writeFileSync(path.join(dir, 'workspace', 'secret-of-alice.txt'), 'alice only\n');
  const started = await startServer(testConfig(dir, llm.url), pino({ level: 'silent' }));
  if (!started?.signIn) throw new Error('the web chat did not start');
  app = started;
  base = `http://127.0.0.1:${app.port}`;
});
afterAll(async () => {
  for (const s of streams) s.close();
  await app?.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** A signed-in tab of `user` and its open stream. */
async function signIn(user: string): Promise<{ tab: Tab; stream: ChatStream }> {
  const link = await app.signIn!.loginLink(app.port!, user, false);
  const { cookie } = await redeemLink(link.url);
  const tab = tabOf(base, cookie);
  tab.csrf = (await tab.get('/api/session')).json.csrf;
  const stream = openStream(base, cookie);
  streams.push(stream);
  await stream.connected();
  return { tab, stream };
}

/** Send a message in `thread` and wait for the model's answer to be shown. */
async function say(who: { tab: Tab; stream: ChatStream }, thread: string, text: string, answer: string) {
  expect((await who.tab.post('/api/send', { thread, text })).status).toBe(200);
  await waitFor(
    () =>
      [...who.stream.rows.values()].some(
        (r) => r.thread === thread && r.body?.kind === 'text' && String(r.body.html).includes(answer),
      ),
    `the answer "${answer}"`,
    20_000,
  );
}

const rowsOf = (s: ChatStream, thread: string) => [...s.rows.values()].filter((r) => r.thread === thread);

describe('web conversations: rename, delete, tool output', () => {
  let alice: { tab: Tab; stream: ChatStream };
  let bob: { tab: Tab; stream: ChatStream };

  beforeAll(async () => {
    llm.setHandler((body: any) => {
      const msgs = body.messages as any[];
      const last = msgs.at(-1);
      const user = String([...msgs].reverse().find((m) => m.role === 'user')?.content ?? '');
      if (user.includes('read it') && last.role !== 'tool')
        return { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: 'secret-of-alice.txt' }) }] };
      if (last.role === 'tool') return { text: 'I read it.' };
      return { text: `echo: ${user}` };
    });
    alice = await signIn('alice');
    bob = await signIn('bob');
    await say(alice, 'a1', 'first of alice', 'echo: first of alice');
    await say(alice, 'a2', 'read it please', 'I read it.');
  }, 60_000);

  it('every row carries when it was first shown, and the history ends with a ready mark', async () => {
    const rows = rowsOf(alice.stream, 'a1');
    for (const r of rows) expect(Math.abs((r as any).at - Date.now())).toBeLessThan(60_000);
    const raw = await new Promise<string>((resolve, reject) => {
      const ctl = new AbortController();
      fetch(`${base}/api/stream`, { headers: { cookie: alice.tab.cookie }, signal: ctl.signal })
        .then(async (res) => {
          const reader = res.body!.getReader();
          let text = '';
          while (!text.includes('event: ready')) text += new TextDecoder().decode((await reader.read()).value);
          ctl.abort();
          resolve(text);
        })
        .catch(reject);
    });
    // The ready mark comes after every stored row.
    expect(raw.indexOf('event: ready')).toBeGreaterThan(raw.lastIndexOf('first of alice'));
  });

  it('renames a conversation: every stream gets its name; an empty name gives it back its first message', async () => {
    const r = await alice.tab.post('/api/conversation/rename', { thread: 'a1', title: '  Plans   for May ' });
    expect(r.status).toBe(200);
    expect(r.json.title).toBe('Plans for May');
    await waitFor(
      () => rowsOf(alice.stream, 'a1').some((x) => x.body?.kind === 'thread' && x.body.title === 'Plans for May'),
      'the name on the stream',
    );
    // Renamed again: still one thread row (it replaces the last).
    await alice.tab.post('/api/conversation/rename', { thread: 'a1', title: '' });
    await waitFor(
      () => rowsOf(alice.stream, 'a1').some((x) => x.body?.kind === 'thread' && x.body.title === null),
      'the name cleared',
    );
    expect(rowsOf(alice.stream, 'a1').filter((x) => x.body?.kind === 'thread')).toHaveLength(1);
    expect((await alice.tab.post('/api/conversation/rename', { thread: 'a1', title: 'x'.repeat(81) })).status).toBe(
      400,
    );
    expect((await alice.tab.post('/api/conversation/rename', { thread: 'a1' })).status).toBe(400);
    expect((await alice.tab.post('/api/conversation/rename', { thread: 'no such', title: 'x' })).status).toBe(400);
  });

  it("refuses to rename or delete another user's conversation, and leaves it as it was", async () => {
    const before = rowsOf(alice.stream, 'a1').length;
    const rename = await bob.tab.post('/api/conversation/rename', { thread: 'a1', title: 'mine now' });
    expect(rename.status).toBe(404);
    expect(rename.json.error).toBe('no such conversation');
    const del = await bob.tab.post('/api/conversation/delete', { thread: 'a1' });
    expect(del.status).toBe(404);
    await new Promise((r) => setTimeout(r, 300));
    expect(rowsOf(alice.stream, 'a1')).toHaveLength(before);
    expect(rowsOf(alice.stream, 'a1').some((x) => x.body?.kind === 'thread' && x.body.title === 'mine now')).toBe(
      false,
    );
    // Nothing of alice's reached bob's stream either.
    expect([...bob.stream.rows.values()].some((x) => x.thread === 'a1')).toBe(false);
  });

  it('rename and delete need the CSRF token', async () => {
    const noCsrf = tabOf(base, alice.tab.cookie, 'wrong');
    expect((await noCsrf.post('/api/conversation/rename', { thread: 'a1', title: 'x' })).status).toBe(403);
    expect((await noCsrf.post('/api/conversation/delete', { thread: 'a1' })).status).toBe(403);
  });

  it('a finished tool line offers its output to its owner only', async () => {
    const line = rowsOf(alice.stream, 'a2').find((r) => r.body?.kind === 'card' && r.body.view.card === 'tool');
    expect(line?.body?.output).toBe(true);
    const own = await alice.tab.get(`/api/tool-output?ref=${line!.ref}`);
    expect(own.status).toBe(200);
    expect(own.json.output).toContain('alice only');
    const other = await bob.tab.get(`/api/tool-output?ref=${line!.ref}`);
    expect(other.status).toBe(404);
    expect(JSON.stringify(other.json)).not.toContain('alice only');
    // A message that is no tool line has no output.
    const text = rowsOf(alice.stream, 'a2').find((r) => r.body?.kind === 'text');
    expect((await alice.tab.get(`/api/tool-output?ref=${text!.ref}`)).status).toBe(404);
  });

  it('deletes a conversation: its messages leave every stream, it is archived, and it stays gone', async () => {
    const second = openStream(base, alice.tab.cookie);
    streams.push(second);
    await second.connected();
    await waitFor(() => rowsOf(second, 'a2').length > 0, 'the other tab has the history');
    const r = await alice.tab.post('/api/conversation/delete', { thread: 'a2' });
    expect(r.status).toBe(200);
    expect(r.json.deleted).toBeGreaterThan(0);
    for (const s of [alice.stream, second])
      await waitFor(
        () =>
          rowsOf(s, 'a2').every((x) => x.body?.kind === 'thread') &&
          rowsOf(s, 'a2').some((x) => x.body?.kind === 'thread' && x.body.deleted === true),
        'the conversation gone from the stream',
      );
    // Gone for rename and delete too, and the other conversation is untouched.
    expect((await alice.tab.post('/api/conversation/rename', { thread: 'a2', title: 'back?' })).status).toBe(404);
    expect((await alice.tab.post('/api/conversation/delete', { thread: 'a2' })).status).toBe(404);
    expect(rowsOf(alice.stream, 'a1').some((x) => x.body?.kind === 'user')).toBe(true);
    // The model's side was archived: a message there again starts with an empty history.
    const before = llm.chatRequests().length;
    await alice.tab.post('/api/send', { thread: 'a2', text: 'hello again' });
    await waitFor(() => llm.chatRequests().length > before, 'the model asked');
    const sent = JSON.stringify(llm.chatRequests().at(-1)!.body.messages);
    expect(sent).toContain('hello again');
    expect(sent).not.toContain('read it please');
  });
});
