/**
 * The approval card end to end in the web chat (the real server, its HTTP API): a write_file
 * whose content is longer than a web card holds arrives whole as a downloadable document before
 * the card; the page's stream carries the document's name only; approving writes exactly that
 * content.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebBody } from '../../src/channels/web/surface.js';
import { visibleText } from '../../src/delivery/visible.js';
import type { App } from '../../src/main.js';
import type { ScriptedLlm } from '../emulators/llm.js';
import { startWebApp, type WebApp } from '../helpers/web-app.js';
import { waitFor } from '../helpers/harness.js';
import { RAW_HIDDEN } from './hostile-args.js';

let web: WebApp;
let app: App;
let llm: ScriptedLlm;
let dir: string;
let base: string;

beforeAll(async () => {
  web = await startWebApp('sb-card-web-');
  ({ app, llm, dir, base } = web);
});
afterAll(async () => {
  await web?.close();
});

async function signIn(user: string): Promise<{ cookie: string; csrf: string }> {
  const link = await app.signIn!.loginLink(app.port!, user, false);
  const res = await fetch(link.url, { redirect: 'manual' });
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  const session = (await (await fetch(`${base}/api/session`, { headers: { cookie } })).json()) as { csrf: string };
  return { cookie, csrf: session.csrf };
}

/** The events of the page's stream until `done` holds for them (or the time runs out). */
async function streamUntil(
  cookie: string,
  done: (bodies: Array<{ ref: string; body: Record<string, unknown> | null }>) => boolean,
): Promise<Array<{ ref: string; body: Record<string, unknown> | null }>> {
  const events: Array<{ ref: string; body: Record<string, unknown> | null }> = [];
  const ctl = new AbortController();
  const res = await fetch(`${base}/api/stream`, { headers: { cookie }, signal: ctl.signal });
  const reader = res.body!.getReader();
  let buf = '';
  const pump = (async () => {
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) return;
      buf += Buffer.from(value).toString('utf8');
      for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = block.split('\n').find((l) => l.startsWith('data: '));
        if (data && block.includes('id: ')) events.push(JSON.parse(data.slice(6)));
      }
    }
  })().catch(() => undefined);
  try {
    await waitFor(() => done(events), 'the stream', 15_000);
  } finally {
    ctl.abort();
    await pump;
  }
  return events;
}

describe('web chat: the card is the command', () => {
  it('a content too long for the card is a document before it; approving writes exactly that content', async () => {
    const content = `${'safe line\n'.repeat(2500)}\u202e\t\x1b[2Jhidden tail\n`;
    llm.push(
      { toolCalls: [{ name: 'write_file', arguments: JSON.stringify({ path: 'notes.txt', content }) }] },
      { text: 'written' },
    );
    const { cookie, csrf } = await signIn('alice');
    const headers = { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf };
    await fetch(`${base}/api/send`, { method: 'POST', headers, body: JSON.stringify({ text: 'write notes' }) });
    const events = await streamUntil(cookie, (e) => e.some((x) => x.body?.kind === 'card'));
    const docAt = events.findIndex((e) => e.body?.kind === 'document');
    const cardAt = events.findIndex((e) => e.body?.kind === 'card');
    expect(docAt).toBeGreaterThanOrEqual(0);
    expect(docAt).toBeLessThan(cardAt);
    // The page gets the document's name, not its text (downloaded on its own).
    const doc = events[docAt]!;
    expect(doc.body).toMatchObject({
      kind: 'document',
      name: expect.stringMatching(/^approval-\w{8}-arguments\.txt$/),
    });
    expect(doc.body?.text).toBe('');

    const download = await fetch(`${base}/api/file?ref=${doc.ref}`, { headers: { cookie } });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename="${String(doc.body?.name)}"`);
    const text = await download.text();
    expect(text).toMatch(/\nnotes\.txt \([\d.]+ KB\)\n/);
    expect(text.endsWith(`\n${visibleText(content)}\n`)).toBe(true);
    expect(text).toContain('⟨U+202E RLO⟩⟨TAB⟩⟨ESC⟩[2Jhidden tail');
    expect(text).not.toMatch(RAW_HIDDEN);
    // Another user cannot download it.
    const other = await signIn('mallory');
    expect((await fetch(`${base}/api/file?ref=${doc.ref}`, { headers: { cookie: other.cookie } })).status).toBe(404);

    const card = (events[cardAt]!.body as Extract<WebBody, { kind: 'card' }>).view;
    const code = card.blocks.find((b) => b.kind === 'code');
    expect(code?.kind === 'code' && code.text.length <= 20_000).toBe(true);
    expect(
      code?.kind === 'code' && /⟨… [\d ]+ more characters on \d+ lines not shown on this card⟩$/.test(code.text),
    ).toBe(true);
    const approve = card.buttons.flat().find((b) => b.label.includes('Approve'));
    expect(approve).toBeDefined();
    const acted = await fetch(`${base}/api/action`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ action: approve!.action }),
    });
    expect(acted.status).toBe(200);
    const file = path.join(dir, 'workspace', 'notes.txt');
    await waitFor(() => {
      try {
        return readFileSync(file, 'utf8') === content;
      } catch {
        return false;
      }
    }, 'notes.txt written');
  });
});
