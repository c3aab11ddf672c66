/**
 * `plainFetch` sends the request line a URL parser would: the path and query as the built-in
 * fetch sends them, for the plain URLs it sends from a cached origin and for the rest it leaves
 * to `node:http`'s own parsing (dot segments, characters to escape, credentials).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainFetch } from '../../src/http/plain-fetch.js';

let server: http.Server;
let port = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ url: req.url, host: req.headers.host, auth: req.headers.authorization ?? null }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const seen = async (f: typeof fetch, url: string) => (await (await f(url)).json()) as Record<string, unknown>;

describe('plainFetch request targets', () => {
  const paths = [
    '',
    '/',
    '/bot424242:BENCH-token/getUpdates',
    '/v1/chat/completions',
    '?offset=5',
    '/a/b?x=1&y=/2&z=%20',
    '/a/../b/./c',
    '/a b/ü?q=ä',
    '/a.b/c.d/...',
    '/x#fragment',
  ];
  for (const p of paths) {
    it(`sends ${JSON.stringify(p || '(no path)')} as the built-in fetch does`, async () => {
      const url = `http://127.0.0.1:${port}${p}`;
      expect(await seen(plainFetch as typeof fetch, url)).toEqual(await seen(fetch, url));
    });
  }

  it('sends credentials in the URL as basic auth, as node:http does', async () => {
    const url = `http://user:secret@127.0.0.1:${port}/path`;
    expect(await seen(plainFetch as typeof fetch, url)).toEqual({
      url: '/path',
      host: `127.0.0.1:${port}`,
      auth: `Basic ${Buffer.from('user:secret').toString('base64')}`,
    });
  });

  it('reaches an IPv6 literal host', async () => {
    const v6 = http.createServer((req, res) => res.end(req.url));
    const listening = await new Promise<boolean>((resolve) => {
      v6.once('error', () => resolve(false));
      v6.listen(0, '::1', () => resolve(true));
    });
    if (!listening) return; // no IPv6 loopback on this host: nothing to reach
    try {
      const res = await plainFetch(`http://[::1]:${(v6.address() as AddressInfo).port}/six?x=6`);
      expect(await res.text()).toBe('/six?x=6');
    } finally {
      await new Promise<void>((resolve) => v6.close(() => resolve()));
    }
  });
});
