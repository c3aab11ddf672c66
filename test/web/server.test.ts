/**
 * The web chat's server without a browser: login links (once only, expiry), the session cookie's
 * attributes, 401s without a session, CSRF and origin checks, body caps, security headers, the
 * admin page's 403, and the `web` commands of the CLI over the same database.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type App, startServer } from '../../src/main.js';
import { startScriptedLlm, type ScriptedLlm } from '../emulators/llm.js';
import { testConfig, waitFor } from '../helpers/harness.js';
import { rejection, sentCopy } from '../helpers/sent-files.js';
import { testDatabaseUrl } from '../helpers/test-db.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');
let app: App;
let llm: ScriptedLlm;
let dir: string;
let base: string;

beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-web-'));
  mkdirSync(path.join(dir, 'workspace'));
  const started = await startServer(
    testConfig(dir, llm.url, { web: { max_upload_bytes: 1000 } }),
    pino({ level: 'silent' }),
  );
  if (!started?.signIn) throw new Error('the web chat did not start');
  app = started;
  base = `http://127.0.0.1:${app.port}`;
});
afterAll(async () => {
  await app?.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** Sign in through a fresh link; returns the cookie header and the CSRF token. */
async function signIn(user = 'bob', admin = false): Promise<{ cookie: string; csrf: string }> {
  const link = await app.signIn!.loginLink(app.port!, user, admin);
  const res = await fetch(link.url, { redirect: 'manual' });
  expect(res.status).toBe(303);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  const session = (await (await fetch(`${base}/api/session`, { headers: { cookie } })).json()) as {
    csrf: string;
    user: string;
    admin: boolean;
  };
  expect(session.user).toBe(user);
  expect(session.admin).toBe(admin);
  return { cookie, csrf: session.csrf };
}

describe('web chat sign-in', () => {
  it('a login link works once: HttpOnly SameSite=Strict cookie and a redirect to /, then refused', async () => {
    const link = await app.signIn!.loginLink(app.port!, 'carol', false);
    expect(link.url).toMatch(new RegExp(`^${base}/login\\?token=[\\w-]{40,}$`));
    const first = await fetch(link.url, { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/');
    const cookie = first.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^sb_session=[\w-]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    const again = await fetch(link.url, { redirect: 'manual' });
    expect(again.status).toBe(403);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(await again.text()).toContain('used already or has expired');
  });

  it('an expired link is refused', async () => {
    const link = await app.signIn!.loginLink(app.port!, 'dave', false, 1);
    const { sql } = await import('kysely');
    await sql`UPDATE web_logins SET expires_at = 1`.execute(app.core.db);
    expect((await fetch(link.url, { redirect: 'manual' })).status).toBe(403);
  });

  it('behind HTTPS (X-Forwarded-Proto) the cookie is Secure', async () => {
    const link = await app.signIn!.loginLink(app.port!, 'erin', false);
    const res = await fetch(link.url, { redirect: 'manual', headers: { 'x-forwarded-proto': 'https' } });
    expect(res.headers.get('set-cookie')).toMatch(/; Secure$/);
  });

  it('without a session: the login page for pages, 401 for API and stream requests', async () => {
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(401);
    expect(await page.text()).toContain('Open a login link to sign in');
    for (const p of ['/api/session', '/api/stream', '/api/status', '/api/admin/state'])
      expect((await fetch(`${base}${p}`)).status).toBe(401);
    expect((await fetch(`${base}/api/send`, { method: 'POST', body: '{}' })).status).toBe(401);
    expect((await fetch(`${base}/`, { headers: { cookie: 'sb_session=forged' } })).status).toBe(401);
  });

  it('sends a strict CSP, X-Frame-Options: DENY and a Referrer-Policy', async () => {
    const res = await fetch(`${base}/`);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  });
});

describe('web chat requests', () => {
  it('a state-changing request needs the CSRF token and this origin', async () => {
    const { cookie, csrf } = await signIn();
    const body = JSON.stringify({ thread: '', text: '/status' });
    const json = { 'content-type': 'application/json', cookie };
    const none = await fetch(`${base}/api/send`, { method: 'POST', headers: json, body });
    expect(none.status).toBe(403);
    expect(((await none.json()) as { error: string }).error).toBe('missing or wrong CSRF token');
    expect(
      (
        await fetch(`${base}/api/send`, {
          method: 'POST',
          headers: { ...json, 'x-csrf-token': 'x'.repeat(csrf.length) },
          body,
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await fetch(`${base}/api/send`, {
          method: 'POST',
          headers: { ...json, 'x-csrf-token': csrf, origin: 'http://evil.example' },
          body,
        })
      ).status,
    ).toBe(403);
    const ok = await fetch(`${base}/api/send`, { method: 'POST', headers: { ...json, 'x-csrf-token': csrf }, body });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: 'command' });
  });

  it('refuses a forged or garbled button action with 400, and an unknown approval through the router', async () => {
    const { cookie, csrf } = await signIn();
    const headers = { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf };
    const act = (action: unknown) =>
      fetch(`${base}/api/action`, { method: 'POST', headers, body: JSON.stringify({ action }) });
    const garbled: unknown[] = [
      undefined,
      'a:x:y',
      { kind: 'approval', id: 'a:1', choice: 'once' },
      { kind: 'approval', id: 'a1', choice: 'toString' },
      { kind: 'question', id: 'q1', index: 100 },
      { kind: 'job', id: 'j1', op: 'explode' },
      { kind: 'pairing', code: '' },
    ];
    for (const action of garbled) {
      const res = await act(action);
      expect(res.status, JSON.stringify(action)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toContain('expected "action"');
    }
    const unknown = await act({ kind: 'approval', id: 'no-such-approval', choice: 'once' });
    expect(unknown.status).toBe(409);
    expect(((await unknown.json()) as { ok: boolean }).ok).toBe(false);
  });

  it('caps bodies: JSON over 64 KB and uploads over web.max_upload_bytes are refused with 413', async () => {
    const { cookie, csrf } = await signIn();
    const headers = { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf };
    const big = await fetch(`${base}/api/send`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ text: 'x'.repeat(70_000) }),
    });
    expect(big.status).toBe(413);
    const up = await fetch(`${base}/api/upload?name=a.bin`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrf },
      body: Buffer.alloc(2000),
    });
    expect(up.status).toBe(413);
    expect(((await up.json()) as { error: string }).error).toContain('web.max_upload_bytes');
    const small = await fetch(`${base}/api/upload?name=../../a b.txt`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrf },
      body: 'hello',
    });
    expect(small.status).toBe(200);
    expect(((await small.json()) as { path: string }).path).toMatch(
      /^uploads\/web\/bob\/\d{8}T\d{6}-[0-9a-f]{6}-a_b\.txt$/,
    );
  });

  it('a message over the flood limit is answered 429 with the flood notice every channel gives, shown once', async () => {
    const { cookie, csrf } = await signIn('flood');
    const send = (i: number) =>
      fetch(`${base}/api/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf },
        body: JSON.stringify({ text: `message ${i}` }),
      });
    // access.rate_limit_per_minute defaults to 20.
    for (let i = 0; i < 20; i++) expect((await send(i)).status).toBe(200);
    const notice = expect.stringMatching(
      /^⏳ You are sending messages too fast: this one and any you send in the next \d+ s are dropped\./,
    );
    // The first refusal is a message of the chat too, as on every channel: the page shows that
    // message and no note of its own (`inChat`); the next ones are the page's notes alone.
    const over = await send(20);
    expect(over.status).toBe(429);
    expect(await over.json()).toEqual({ status: 'rate_limited', error: notice, inChat: true });
    const again = await send(21);
    expect(again.status).toBe(429);
    expect(await again.json()).toEqual({ status: 'rate_limited', error: notice });
    const told = await app.core.db
      .selectFrom('deliveries')
      .select('idem_key')
      .where('idem_key', 'like', 'web:flood:%:flood')
      .execute();
    expect(told).toHaveLength(1);
  });

  it('the same POST twice (a retry after the network failed) is one message with one answer', async () => {
    // Answered by what was asked, not from the shared queue: an earlier test's messages (the flood)
    // may still be being answered, and would take a queued reply.
    const asked = (body: { messages?: unknown[] }) =>
      JSON.stringify(body.messages?.at(-1) ?? '').includes('are you there?');
    llm.setHandler((body) => ({ text: asked(body) ? 'only once' : 'ok' }));
    onTestFinished(() => llm.setHandler(null));
    const { cookie, csrf } = await signIn('retry');
    const post = (body: Record<string, unknown>) =>
      fetch(`${base}/api/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf },
        body: JSON.stringify(body),
      });
    const body = { thread: 'r1', text: 'are you there?', id: 'msg-0001-abcdef' };
    expect(await (await post(body)).json()).toEqual({ status: 'queued' });
    expect(await (await post(body)).json()).toEqual({ status: 'duplicate' });
    const { sql } = await import('kysely');
    const shown = async () =>
      (
        await sql<{ body: string }>`SELECT body FROM web_messages WHERE chat_key = 'retry' ORDER BY id`.execute(
          app.core.db,
        )
      ).rows.map((r) => JSON.parse(r.body) as { kind: string; text?: string; html?: string });
    await waitFor(async () => (await shown()).some((b) => b.kind === 'text'), 'the answer');
    // A retried command runs once too, and its answer is shown once.
    const cmd = { thread: 'r1', text: '/status', id: 'cmd-0001-abcdef' };
    expect(await (await post(cmd)).json()).toEqual({ status: 'command' });
    expect(await (await post(cmd)).json()).toEqual({ status: 'duplicate' });
    // Wait for the command's answer rather than a fixed pause: on PostgreSQL it takes longer than on SQLite.
    await waitFor(
      async () => (await shown()).some((b) => b.kind === 'text' && b.html?.includes('Turn:')),
      'the status',
    );
    const rows = await shown();
    expect(rows.filter((b) => b.kind === 'user').map((b) => b.text)).toEqual(['are you there?', '/status']);
    expect(rows.filter((b) => b.kind === 'text' && b.html?.includes('only once'))).toHaveLength(1);
    expect(rows.filter((b) => b.kind === 'text' && b.html?.includes('Turn:'))).toHaveLength(1);
    expect(llm.chatRequests().filter((r) => asked(r.body))).toHaveLength(1);
    // An id that is not one is refused before anything is shown.
    expect((await post({ thread: 'r1', text: 'x', id: 'no good' })).status).toBe(400);
  });

  it('an upload path of another user is refused in a message', async () => {
    const { cookie, csrf } = await signIn('mallory');
    for (const p of [
      'uploads/web/bob/20260101T000000-abcdef-a.txt',
      'uploads/web/mallory/../bob/20260101T000000-abcdef-a.txt',
      'uploads/web/mallory/sub/20260101T000000-abcdef-a.txt',
    ]) {
      const res = await fetch(`${base}/api/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf },
        body: JSON.stringify({ text: 'look', files: [{ path: p }] }),
      });
      expect(res.status, p).toBe(400);
    }
  });

  it('a file the bot sends is the copy taken when it was sent: a file gone or a folder gets none, and what the workspace does later changes nothing', async () => {
    const { cookie } = await signIn('ivan');
    const ws = path.join(dir, 'workspace');
    writeFileSync(path.join(ws, 'numbers.csv'), 'a,b\n');
    mkdirSync(path.join(ws, 'charts'));
    const surface = app.signIn!.surface!;
    const address = { chatKey: 'ivan', threadKey: '' };
    const ref = await surface.upload(address, await sentCopy(app.core, 'numbers.csv'));
    const file = await fetch(`${base}/api/file?ref=${ref}`, { headers: { cookie } });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-disposition')).toBe('attachment; filename="numbers.csv"');
    expect(await file.text()).toBe('a,b\n');
    // Refused when sent, before anything is queued or shown: a folder, a file that is not there.
    for (const [name, why] of [
      ['charts', 'charts is not a regular file'],
      ['gone.csv', 'Cannot read gone.csv: ENOENT'],
    ] as const) {
      expect((await rejection(sentCopy(app.core, name)))?.message).toContain(why);
    }
    const { sql } = await import('kysely');
    const rows = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM web_messages WHERE chat_key = 'ivan'`.execute(
      app.core.db,
    );
    expect(Number(rows.rows[0]!.n)).toBe(1);
    // Gone (or changed) since it was sent: the download is still what was sent.
    rmSync(path.join(ws, 'numbers.csv'));
    const later = await fetch(`${base}/api/file?ref=${ref}`, { headers: { cookie } });
    expect(later.status).toBe(200);
    expect(await later.text()).toBe('a,b\n');
    expect(readdirSync(ws)).toContain('charts');
  });

  it('/admin is for admins: 403 for others, the console for an admin', async () => {
    const user = await signIn('frank');
    expect((await fetch(`${base}/admin`, { headers: { cookie: user.cookie } })).status).toBe(403);
    expect((await fetch(`${base}/api/admin/state`, { headers: { cookie: user.cookie } })).status).toBe(403);
    const admin = await signIn('grace', true);
    expect((await fetch(`${base}/admin`, { headers: { cookie: admin.cookie } })).status).toBe(200);
    const state = (await (
      await fetch(`${base}/api/admin/state`, { headers: { cookie: admin.cookie } })
    ).json()) as Record<string, unknown[]>;
    expect(Object.keys(state).sort()).toEqual(['approvals', 'failed', 'jobs', 'mcp', 'pairing', 'questions', 'rules']);
  });

  it('the stream sends history, resumes after Last-Event-ID, and a message gets its answer', async () => {
    llm.push({ text: 'Hi **bob**' });
    const { cookie, csrf } = await signIn();
    const sent = await fetch(`${base}/api/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf },
      body: JSON.stringify({ thread: 't1', text: 'hello' }),
    });
    expect(((await sent.json()) as { status: string }).status).toBe('queued');
    const events: Array<{ id: number; body: { kind: string; html?: string } }> = [];
    const ctl = new AbortController();
    const res = await fetch(`${base}/api/stream`, { headers: { cookie }, signal: ctl.signal });
    const reader = res.body!.getReader();
    let buf = '';
    const pump = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += Buffer.from(value).toString('utf8');
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = block.split('\n').find((l) => l.startsWith('data: '));
          if (data && block.includes('id: ')) events.push(JSON.parse(data.slice(6)));
        }
      }
    })().catch(() => undefined);
    await waitFor(
      () => events.some((e) => e.body.kind === 'text' && e.body.html === '<p>Hi <strong>bob</strong></p>\n'),
      'the answer on the stream',
    );
    ctl.abort();
    await pump;
    expect(events.find((e) => e.body.kind === 'user')).toBeDefined();
    const last = events.at(-1)!.id;
    // Resumed after the last id: nothing new.
    const resumed = new AbortController();
    const again = await fetch(`${base}/api/stream`, {
      headers: { cookie, 'last-event-id': String(last) },
      signal: resumed.signal,
    });
    const first = await again.body!.getReader().read();
    expect(Buffer.from(first.value!).toString('utf8')).toBe('retry: 1000\n\n');
    resumed.abort();
  });
});

describe('switchboard web link / sessions / revoke', () => {
  const cli = (args: string[]) =>
    spawnSync(process.execPath, [BIN, ...args], {
      env: {
        ...process.env,
        DATABASE_URL: testDatabaseUrl(dir),
        SWITCHBOARD_WORKSPACE: path.join(dir, 'workspace'),
        SWITCHBOARD__HTTP__PORT: String(app.port),
        SWITCHBOARD__HTTP__HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('prints a link that signs in, lists the session and revokes it', async () => {
    const link = cli(['web', 'link', '--user', 'heidi', '--admin', '--ttl', '5']);
    expect(link.stderr).toBe('');
    expect(link.status).toBe(0);
    expect(link.stdout).toMatch(new RegExp(`^${base}/login\\?token=[\\w-]+\\n$`));
    const res = await fetch(link.stdout.trim(), { redirect: 'manual' });
    expect(res.status).toBe(303);
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
    const sessions = cli(['web', 'sessions']);
    const line = sessions.stdout.split('\n').find((l) => l.includes('web:heidi'));
    expect(line).toMatch(/^\w{8} {2}web:heidi {2}admin {2}\d{4}-/);
    const revoke = cli(['web', 'revoke', line!.split(' ')[0]!]);
    expect(revoke.stdout).toBe('revoked 1 session\n');
    expect((await fetch(`${base}/api/session`, { headers: { cookie } })).status).toBe(401);
  });

  it('refuses bad usage with exit 2', () => {
    for (const args of [['web'], ['web', 'link', '--ttl', '0'], ['web', 'link', '--user', 'a b'], ['web', 'revoke']]) {
      const r = cli(args);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/^usage: /);
    }
    const none = cli(['web', 'revoke', 'nobody']);
    expect(none.status).toBe(1);
    expect(none.stderr).toBe('no web session nobody\n');
  });
});
