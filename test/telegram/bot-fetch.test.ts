/**
 * grammY's fetch (`channels/telegram/bot-fetch.ts`) against a real HTTP server on 127.0.0.1: JSON
 * calls over one kept-alive connection, uploads streamed through the built-in fetch, and aborts
 * through a signal that is not a native AbortSignal (grammY's polyfill is an EventTarget of its own).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { botFetch } from '../../src/channels/telegram/bot-fetch.js';

interface Seen {
  method: string;
  type: string;
  body: string;
}

/** A server that records each request and answers `{ ok: true, result: <n> }`, or never when `hang`. */
async function serve(hang = false) {
  const seen: Seen[] = [];
  let connections = 0;
  let closedEarly: () => void = () => {};
  const requestClosed = new Promise<void>((resolve) => {
    closedEarly = resolve;
  });
  let held: () => void = () => {};
  const requestHeld = new Promise<void>((resolve) => {
    held = resolve;
  });
  const server = http.createServer(async (req, res) => {
    if (hang) {
      req.socket.once('close', () => closedEarly());
      held();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    seen.push({
      method: req.method ?? '',
      type: req.headers['content-type'] ?? '',
      body: Buffer.concat(chunks).toString(),
    });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, result: seen.length }));
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/bot1:x`,
    seen,
    connections: () => connections,
    requestClosed,
    requestHeld,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An abort signal that is an EventTarget but not an AbortSignal, as grammY's polyfill is. */
class ForeignSignal extends EventTarget {
  aborted = false;
  abort(): void {
    this.aborted = true;
    this.dispatchEvent(new Event('abort'));
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe('the Bot API fetch', () => {
  it('sends JSON calls over one kept-alive connection and reads each answer as JSON', async () => {
    const server = await serve();
    cleanups.push(server.close);
    const results: unknown[] = [];
    for (const text of ['one', 'two', 'three']) {
      const res = await botFetch(`${server.url}/sendMessage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'keep-alive' },
        body: JSON.stringify({ chat_id: 1, text }),
        signal: new ForeignSignal() as unknown as AbortSignal,
      });
      expect(res.ok).toBe(true);
      results.push(await res.json());
    }
    expect(results).toEqual([
      { ok: true, result: 1 },
      { ok: true, result: 2 },
      { ok: true, result: 3 },
    ]);
    expect(server.seen.map((s) => JSON.parse(s.body).text)).toEqual(['one', 'two', 'three']);
    expect(server.connections()).toBe(1);
  });

  it('streams an upload through the built-in fetch with its multipart bytes intact', async () => {
    const server = await serve();
    cleanups.push(server.close);
    const parts = ['--b\r\ncontent-disposition: form-data; name="chat_id"\r\n\r\n1\r\n', '--b--\r\n'];
    const res = await botFetch(`${server.url}/sendDocument`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=b', connection: 'keep-alive' },
      body: Readable.from(parts.map((p) => new TextEncoder().encode(p))) as unknown as RequestInit['body'],
      signal: new ForeignSignal() as unknown as AbortSignal,
    });
    expect(await res.json()).toEqual({ ok: true, result: 1 });
    expect(server.seen).toEqual([{ method: 'POST', type: 'multipart/form-data; boundary=b', body: parts.join('') }]);
  });

  it('a foreign signal aborts a call in flight: it rejects with an AbortError and the request is dropped', async () => {
    const server = await serve(true);
    cleanups.push(server.close);
    const signal = new ForeignSignal();
    const call = botFetch(`${server.url}/getUpdates`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout: 30 }),
      signal: signal as unknown as AbortSignal,
    });
    const outcome = call.then(
      () => 'answered',
      (err: Error) => err.name,
    );
    // Abort once the server holds the request (as a long poll is held).
    await server.requestHeld;
    signal.abort();
    expect(await outcome).toBe('AbortError');
    await server.requestClosed;
  });

  it('a foreign signal aborts an upload in flight too (the built-in fetch gets a native signal that follows it)', async () => {
    const server = await serve(true);
    cleanups.push(server.close);
    const signal = new ForeignSignal();
    const outcome = botFetch(`${server.url}/sendDocument`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
      body: Readable.from([new TextEncoder().encode('--b--\r\n')]) as unknown as RequestInit['body'],
      signal: signal as unknown as AbortSignal,
    }).then(
      () => 'answered',
      (err: Error) => err.name,
    );
    await server.requestHeld;
    signal.abort();
    expect(await outcome).toBe('AbortError');
    await server.requestClosed;
  });
});
