import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREE_FAILURES, LoginLimiter, MAX_BLOCK_MS, WINDOW_MS } from '../../src/channels/web/login-limit.js';
import type { App } from '../../src/main.js';
import { startWebApp, type WebApp } from '../helpers/web-app.js';

let web: WebApp;
let app: App;
let base: string;

beforeAll(async () => {
  web = await startWebApp('sb-login-');
  ({ app, base } = web);
});
afterAll(async () => {
  await web?.close();
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
    const link = await app.signIn!.loginLink(app.port!, 'alice', false);
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
    const started = Date.now();
    const statuses = await Promise.all(Array.from({ length: 300 }, (_, i) => guess(1000 + i).then((r) => r.status)));
    const tookS = (Date.now() - started) / 1000;
    expect(statuses.every((s) => s === 403 || s === 429)).toBe(true);
    // This address already failed once in the test above; at most the remaining free tries get a
    // 403, and then one more per wait that ended during the burst: the k-th comes at the soonest
    // 1 + 2 + … + 2^(k-1) = 2^k - 1 s after the free tries (a burst on a loaded machine is slow).
    const waitsEnded = Math.floor(Math.log2(tookS + 1));
    const answered = statuses.filter((s) => s === 403).length;
    expect(answered).toBeLessThanOrEqual(FREE_FAILURES - 1 + waitsEnded);
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
