/**
 * The webhook plumbing every platform route shares (`http/webhook.ts`): POST only, a capped body,
 * constant-time secrets, the start-up gate, and an answer held until the work settled.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HttpServer } from '../../src/http/server.js';
import { sameSecret, settledWithin, StartGate, webhookBody } from '../../src/http/webhook.js';
import { silentLogger } from '../../src/log.js';

let http: HttpServer | null = null;
afterEach(async () => {
  await http?.close();
  http = null;
});

describe('webhook plumbing', () => {
  it('compares secrets: equal only when the same, whatever the lengths; a missing or repeated header is no secret', () => {
    expect(sameSecret('right-secret', 'right-secret')).toBe(true);
    expect(sameSecret('right-secreT', 'right-secret')).toBe(false);
    expect(sameSecret('right', 'right-secret')).toBe(false);
    expect(sameSecret('right-secret-and-more', 'right-secret')).toBe(false);
    expect(sameSecret('', 'right-secret')).toBe(false);
    expect(sameSecret(undefined, 'right-secret')).toBe(false);
    expect(sameSecret(['right-secret', 'right-secret'], 'right-secret')).toBe(false);
  });

  it('reads a POST body up to its cap; answers 405 to other methods and 413 beyond the cap', async () => {
    http = new HttpServer(silentLogger());
    const bodies: string[] = [];
    http.route('/hook', async (req, res) => {
      const body = await webhookBody(req, res, 16, silentLogger());
      if (body === undefined) return;
      bodies.push(body);
      res.writeHead(200).end();
    });
    const url = `http://127.0.0.1:${await http.listen(0, '127.0.0.1')}/hook`;
    expect((await fetch(url, { method: 'POST', body: 'sixteen bytes ok' })).status).toBe(200);
    const get = await fetch(url);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const big = await fetch(url, { method: 'POST', body: 'seventeen bytes!!' });
    expect(big.status).toBe(413);
    expect(await big.text()).toMatch(/over 16 bytes/);
    expect(bodies).toEqual(['sixteen bytes ok']);
  });

  it('holds requests while the channel starts, lets them on once it runs, refuses them once it stops', async () => {
    const gate = new StartGate(1_000);
    const early = gate.admit();
    let admitted: boolean | undefined;
    void early.then((a) => (admitted = a));
    await new Promise((r) => setTimeout(r, 50));
    expect(admitted).toBeUndefined();
    gate.open();
    expect(await early).toBe(true);
    expect(await gate.admit()).toBe(true);

    // Held while stopping: let go at once, refused.
    const starting = new StartGate(10_000);
    const held = starting.admit();
    starting.close();
    const at = Date.now();
    expect(await held).toBe(false);
    expect(await starting.admit()).toBe(false);
    expect(Date.now() - at).toBeLessThan(500);
    expect(starting.isStopped).toBe(true);
    // Opened again (a restart): handled again.
    starting.open();
    expect(await starting.admit()).toBe(true);
  });

  it('refuses a request the start did not let on within the hold, counted from its arrival', async () => {
    const gate = new StartGate(200);
    const asked = Date.now();
    expect(await gate.admit()).toBe(false);
    expect(Date.now() - asked).toBeGreaterThanOrEqual(190);
    // Arrived long ago (it waited for its body): no hold left.
    const at = Date.now();
    expect(await gate.admit(Date.now() - 1_000)).toBe(false);
    expect(Date.now() - at).toBeLessThan(100);
  });

  it('holds an answer until the work settles, either way, or the time is up', async () => {
    expect(await settledWithin(new Promise((r) => setTimeout(r, 20)), 1_000)).toBe(true);
    expect(await settledWithin(Promise.reject(new Error('write failed')), 1_000)).toBe(true);
    const at = Date.now();
    expect(await settledWithin(new Promise(() => {}), 100)).toBe(false);
    expect(Date.now() - at).toBeLessThan(1_000);
  });
});
