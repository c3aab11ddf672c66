/**
 * Guessing login links is slowed per address: a few wrong tokens are answered 403 as always, then
 * `/login` answers 429 with `Retry-After` — without using up a valid link sent meanwhile — and
 * the waits grow. After the wait a valid link signs in and the address starts afresh. Real web
 * chat on 127.0.0.1, real HTTP; the limiter's arithmetic on a clock the test moves.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREE_FAILURES, LoginLimiter, MAX_BLOCK_MS, WINDOW_MS } from '../../src/channels/web/login-limit.js';
import { type App, startServer } from '../../src/main.js';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { testConfig } from '../helpers/harness.js';

let app: App;
let llm: ScriptedLlm;
let dir: string;
let base: string;

beforeAll(async () => {
  llm = await startScriptedLlm();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-login-'));
  mkdirSync(path.join(dir, 'workspace'));
  const started = await startServer(testConfig(dir, llm.url), pino({ level: 'silent' }));
  if (!started?.web) throw new Error('the web chat did not start');
  app = started;
  base = `http://127.0.0.1:${app.port}`;
});
afterAll(async () => {
  await app?.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

const guess = (n: number) => fetch(`${base}/login?token=guess-${n}-${'x'.repeat(40)}`, { redirect: 'manual' });

describe('/login guesses', () => {
  it('are answered 429 with Retry-After after a few failures; a valid link waits, unused, and then works', async () => {
    for (let i = 0; i < FREE_FAILURES; i++) expect((await guess(i)).status).toBe(403);
    const refused = await guess(99);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(await refused.text()).toContain('Too many tries');

    // A valid link during the wait is refused too, and not used up by it.
    const link = await app.web!.loginLink(app.port!, 'alice', false);
    const early = await fetch(link.url, { redirect: 'manual' });
    expect(early.status).toBe(429);
    expect(early.headers.get('set-cookie')).toBeNull();

    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 100));
    const signedIn = await fetch(link.url, { redirect: 'manual' });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('set-cookie')).toMatch(/^sb_session=/);
    // The success forgot the failures: the next wrong token is a plain 403 again.
    expect((await guess(100)).status).toBe(403);
  });

  it('300 guesses in a burst: all but the first few are refused with 429', async () => {
    const statuses = await Promise.all(Array.from({ length: 300 }, (_, i) => guess(1000 + i).then((r) => r.status)));
    const slowed = statuses.filter((s) => s === 429).length;
    // This address already failed once in the test above; at most the remaining free tries get a 403.
    expect(slowed).toBeGreaterThanOrEqual(300 - FREE_FAILURES);
  });
});

describe('LoginLimiter', () => {
  it('doubles the wait with each failure past the free ones, up to the cap, per address', () => {
    const limiter = new LoginLimiter();
    let now = 1_000_000;
    for (let i = 0; i < FREE_FAILURES - 1; i++) limiter.failed('a', now);
    expect(limiter.waitMs('a', now)).toBe(0);
    const waits: number[] = [];
    for (let i = 0; i < 10; i++) {
      limiter.failed('a', now);
      waits.push(limiter.waitMs('a', now));
      now += limiter.waitMs('a', now);
    }
    expect(waits.slice(0, 4)).toEqual([1000, 2000, 4000, 8000]);
    expect(Math.max(...waits)).toBe(MAX_BLOCK_MS);
    expect(limiter.waitMs('b', now)).toBe(0);
  });

  it('forgets failures once the window has passed', () => {
    const limiter = new LoginLimiter();
    for (let i = 0; i < FREE_FAILURES - 1; i++) limiter.failed('a', 0);
    limiter.failed('a', WINDOW_MS + 1);
    expect(limiter.waitMs('a', WINDOW_MS + 1)).toBe(0);
  });
});
