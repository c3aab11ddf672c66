/**
 * Authority is current: a web user's admin power is read from the database at each decision. An
 * operator signed in from an `--admin` link is an admin on this instance and on a second core over
 * the same database (which never saw a request of theirs); once `switchboard web revoke` ends
 * their sessions, the old cookie is refused, its open event stream ends, and a new session of the
 * same user from a plain link can neither decide Alice's approval card nor let a pairing code in —
 * on either core. Real server on 127.0.0.1, real HTTP, the real CLI over the same database.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultToolset } from '../../src/compose.js';
import { Core } from '../../src/core/core.js';
import { type App, startServer } from '../../src/main.js';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { testConfig, waitFor } from '../helpers/harness.js';
import { testDatabaseUrl } from '../helpers/test-db.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');
let app: App;
let second: Core;
let llm: ScriptedLlm;
let dir: string;
let base: string;

beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-revoke-'));
  mkdirSync(path.join(dir, 'workspace'));
  const config = testConfig(dir, llm.url);
  // Another instance over the same database: it decides from the store, like the server. Opened
  // first, and its catalog write awaited (a read queues behind it): two SQLite connections in one
  // process must not hold write transactions at once (busy_timeout blocks the only thread).
  second = await Core.open({ config, ...defaultToolset(config) });
  await second.db.selectFrom('known_tools').select('name').execute();
  const started = await startServer(config, pino({ level: 'silent' }));
  if (!started?.signIn) throw new Error('the web chat did not start');
  app = started;
  base = `http://127.0.0.1:${app.port}`;
});
afterAll(async () => {
  await second?.close();
  await app?.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

interface Session {
  cookie: string;
  csrf: string;
}

async function signIn(user: string, admin: boolean): Promise<Session> {
  const link = await app.signIn!.loginLink(app.port!, user, admin);
  const res = await fetch(link.url, { redirect: 'manual' });
  expect(res.status).toBe(303);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  const me = (await (await fetch(`${base}/api/session`, { headers: { cookie } })).json()) as { csrf: string };
  return { cookie, csrf: me.csrf };
}

function post(s: Session, route: string, body: unknown): Promise<Response> {
  return fetch(`${base}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: s.cookie, 'x-csrf-token': s.csrf },
    body: JSON.stringify(body),
  });
}

function revoke(user: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [BIN, 'web', 'revoke', user], {
    env: {
      ...process.env,
      DATABASE_URL: testDatabaseUrl(dir),
      SWITCHBOARD_WORKSPACE: path.join(dir, 'workspace'),
      LOG_LEVEL: 'silent',
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('revoking a web admin', () => {
  it('takes the power away at once, on every core: the same user signed in again cannot decide', async () => {
    // Alice's turn waits on an approval card.
    llm.push(
      { toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: 'echo from-alice' }) }] },
      { text: 'done' },
    );
    const alice = await signIn('alice', false);
    expect((await post(alice, '/api/send', { thread: '', text: 'run it' })).status).toBe(200);
    const card = await waitFor(
      () => app.core.db.selectFrom('approvals').selectAll().where('status', '=', 'pending').executeTakeFirst(),
      "Alice's approval card",
    );
    expect(card.requester).toBe('web:alice');
    const code = await app.core.access.requestPairing('telegram', '4242', 'Mallory', '4242');

    const operator = await signIn('operator', true);
    expect(await app.core.isAdmin('web:operator')).toBe(true);
    expect(await second.isAdmin('web:operator')).toBe(true);

    // An open event stream of the admin session, to see it end.
    const stream = await fetch(`${base}/api/stream`, { headers: { cookie: operator.cookie } });
    expect(stream.status).toBe(200);
    const ended = (async () => {
      const reader = stream.body!.getReader();
      for (;;) if ((await reader.read()).done) return Date.now();
    })();

    const r = revoke('operator');
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^revoked \d+ sessions?\n$/);
    const revokedAt = Date.now();
    expect(await app.core.isAdmin('web:operator')).toBe(false);
    expect(await second.isAdmin('web:operator')).toBe(false);
    expect((await fetch(`${base}/api/session`, { headers: { cookie: operator.cookie } })).status).toBe(401);
    expect((await ended) - revokedAt).toBeLessThan(2_500);

    // The same user, from a plain link: no admin power over Alice's card or the pairing code.
    const again = await signIn('operator', false);
    const approve = await post(again, '/api/action', { action: { kind: 'approval', id: card.id, choice: 'once' } });
    expect(approve.status).toBe(409);
    expect(((await approve.json()) as { ok: boolean }).ok).toBe(false);
    const pair = await post(again, '/api/action', { action: { kind: 'pairing', code: code.code } });
    expect(pair.status).toBe(409);
    expect(((await pair.json()) as { ok: boolean }).ok).toBe(false);
    expect((await fetch(`${base}/api/admin/state`, { headers: { cookie: again.cookie } })).status).toBe(403);
    // Through the second core too.
    expect(
      (await second.decideApproval({ id: card.id, decision: 'approve', scope: 'once', by: 'web:operator' })).ok,
    ).toBe(false);

    const still = await app.core.db
      .selectFrom('approvals')
      .select('status')
      .where('id', '=', card.id)
      .executeTakeFirst();
    expect(still?.status).toBe('pending');
    const pairing = await app.core.db
      .selectFrom('pairing_codes')
      .select('status')
      .where('code', '=', code.code)
      .executeTakeFirst();
    expect(pairing?.status).toBe('pending');

    // Alice herself still decides her card.
    const own = await post(alice, '/api/action', { action: { kind: 'approval', id: card.id, choice: 'no_note' } });
    expect(((await own.json()) as { ok: boolean }).ok).toBe(true);
  });
});
