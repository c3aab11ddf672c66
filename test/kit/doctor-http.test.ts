import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callPlatformOk } from '../../src/kit/doctor-http.js';

let server: http.Server;
let root = '';

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const replies: Record<string, [number, object]> = {
      '/ok': [200, { ok: true, user: 'bot' }],
      '/refused': [200, { ok: false, error: 'invalid_auth' }],
      '/described': [401, { ok: false, description: 'Unauthorized' }],
    };
    const [status, body] = replies[req.url ?? ''] ?? [404, { ok: false }];
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('callPlatformOk', () => {
  it('returns the reply when it is ok', async () => {
    expect(await callPlatformOk(`${root}/ok`, {}, 'auth.test')).toMatchObject({ ok: true, user: 'bot' });
  });

  it('names the host, what was refused, the error, the status and the hint', async () => {
    const host = new URL(root).host;
    await expect(callPlatformOk(`${root}/refused`, { method: 'POST' }, 'auth.test for the bot token')).rejects.toThrow(
      `${host} refused auth.test for the bot token: invalid_auth (HTTP 200)`,
    );
    await expect(
      callPlatformOk(`${root}/described`, {}, 'getMe', (status) => (status === 401 ? ' — check the token' : '')),
    ).rejects.toThrow(`${host} refused getMe: Unauthorized (HTTP 401) — check the token`);
  });
});
