/**
 * The kit's webhook route (`kit/webhook-route.ts`): the body cap, then the platform's checks, then
 * the start gate, then the platform's handling — in that order, whatever the platform.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { answerPlain, HttpServer, WebhookRoute } from '../../src/kit/index.js';
import { silentLogger } from '../../src/log.js';

let http: HttpServer | null = null;
afterEach(async () => {
  await http?.close();
  http = null;
});

/** A route whose check wants the header `x-secret: s` and answers `handshake` bodies itself. */
async function route(startHoldMs: number) {
  http = new HttpServer(silentLogger());
  const handled: Array<{ text: string; arrived: number }> = [];
  const hook = new WebhookRoute<{ text: string }>({
    http,
    path: '/hook',
    bodyLimit: 32,
    startHoldMs,
    log: silentLogger(),
    accept: (req, res, raw) => {
      if (req.headers['x-secret'] !== 's') return answerPlain(res, 401, 'unauthorized');
      if (raw === 'handshake') return answerPlain(res, 200, 'hello');
      return { text: raw };
    },
    handle: async (accepted, res, arrived) => {
      handled.push({ ...accepted, arrived });
      res.writeHead(200).end('done');
    },
  });
  const url = `http://127.0.0.1:${await http.listen(0, '127.0.0.1')}/hook`;
  const post = (body: string, secret = 's') => fetch(url, { method: 'POST', body, headers: { 'x-secret': secret } });
  return { hook, handled, post, url };
}

describe('WebhookRoute', () => {
  it('caps the body and runs the checks before the gate: refusals and handshakes need no running channel', async () => {
    const { handled, post, url } = await route(10_000);
    expect((await fetch(url)).status).toBe(405);
    expect((await post('x'.repeat(33))).status).toBe(413);
    expect((await post('event', 'wrong')).status).toBe(401);
    const hello = await post('handshake');
    expect([hello.status, await hello.text()]).toEqual([200, 'hello\n']);
    expect(handled).toEqual([]);
  });

  it('holds a request that came in while the channel starts and handles it once the channel runs', async () => {
    const { hook, handled, post } = await route(5_000);
    const early = post('event');
    await new Promise((r) => setTimeout(r, 200));
    expect(handled).toEqual([]);
    const opened = Date.now();
    hook.open();
    const res = await early;
    expect([res.status, await res.text()]).toEqual([200, 'done']);
    expect(handled).toHaveLength(1);
    expect(handled[0]?.text).toBe('event');
    // The arrival is when the request came in, not when the gate let it on (deadlines count from it).
    expect(handled[0]?.arrived).toBeLessThan(opened);
  });

  it('answers 503 with a retry hint when the start outlasts the hold, and at once after the channel stopped', async () => {
    const { hook, handled, post } = await route(50);
    const late = await post('event');
    expect(late.status).toBe(503);
    expect(late.headers.get('retry-after')).toBe('1');
    hook.open();
    expect((await post('event')).status).toBe(200);
    hook.close();
    const started = Date.now();
    expect((await post('event')).status).toBe(503);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(handled).toHaveLength(1);
  });
});
