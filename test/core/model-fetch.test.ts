import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGzip, gzipSync } from 'node:zlib';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { modelFetch } from '../../src/core/model-fetch.js';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';

/** A server on 127.0.0.1 that counts connections and answers with `handler`. */
async function serve(
  handler: http.RequestListener,
): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const server = http.createServer(handler);
  server.keepAliveTimeout = 60_000;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const readBody = async (req: http.IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe('the model client fetch', () => {
  let llm: ScriptedLlm;

  it('streams a completion through the SDK and sends the body whole, with its length', async () => {
    llm = await startScriptedLlm({ keepAliveTimeoutMs: 60_000 });
    cleanups.push(() => llm.close());
    const client = new OpenAI({ baseURL: llm.url, apiKey: 'k', fetch: modelFetch, maxRetries: 0 });
    for (let i = 0; i < 3; i++) {
      llm.push({ text: `answer number ${i}, streamed in pieces`, chunkSize: 5 });
      const stream = await client.chat.completions.create({
        model: 'm',
        stream: true,
        messages: [{ role: 'user', content: `question ${i} — ünïcödé` }],
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text).toBe(`answer number ${i}, streamed in pieces`);
    }
    const requests = llm.chatRequests();
    expect(requests.map((r) => r.body.messages[0].content)).toEqual([
      'question 0 — ünïcödé',
      'question 1 — ünïcödé',
      'question 2 — ünïcödé',
    ]);
    for (const r of requests) {
      expect(r.headers['content-length']).toBe(String(Buffer.byteLength(JSON.stringify(r.body))));
      expect(r.headers.authorization).toBe('Bearer k');
    }
  });

  it('reuses a kept-alive connection', async () => {
    const srv = await serve(async (req, res) => {
      await readBody(req);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    cleanups.push(srv.close);
    for (let i = 0; i < 4; i++) {
      const res = await modelFetch(`${srv.url}/v1/x`, {
        method: 'POST',
        body: '{"n":1}',
        headers: { 'content-type': 'application/json' },
      });
      expect(await res.json()).toEqual({ ok: true });
    }
    expect(srv.connections()).toBe(1);
  });

  it('ends a streaming body with an AbortError when the signal fires mid-stream, and closes the connection', async () => {
    let closed!: () => void;
    const gone = new Promise<void>((r) => (closed = r));
    const srv = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"x":1}\n\n');
      req.socket.on('close', closed);
    });
    cleanups.push(srv.close);
    const ac = new AbortController();
    const res = await modelFetch(`${srv.url}/v1/s`, { method: 'POST', body: '{}', signal: ac.signal });
    expect(res.status).toBe(200);
    const iterator = (res.body as unknown as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(Buffer.from(first.value as Buffer).toString()).toContain('"x":1');
    ac.abort();
    await expect(iterator.next()).rejects.toMatchObject({ name: 'AbortError' });
    await gone;
  });

  it('rejects with an AbortError when the signal fires before the answer, or has already fired', async () => {
    const srv = await serve(() => {
      // never answers
    });
    cleanups.push(srv.close);
    const ac = new AbortController();
    const pending = modelFetch(`${srv.url}/v1/s`, { method: 'POST', body: '{}', signal: ac.signal });
    setTimeout(() => ac.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await expect(modelFetch(`${srv.url}/v1/s`, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('the SDK stops a stream silently on abort, as with the built-in fetch', async () => {
    llm = await startScriptedLlm();
    cleanups.push(() => llm.close());
    llm.push({ hang: true, text: 'partial' });
    const client = new OpenAI({ baseURL: llm.url, apiKey: 'k', fetch: modelFetch, maxRetries: 0 });
    const ac = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'm', stream: true, messages: [{ role: 'user', content: 'q' }] },
      { signal: ac.signal },
    );
    let text = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (text === 'partial') ac.abort();
    }
    expect(text).toBe('partial');
  });

  it('decodes a compressed answer, keeps status and headers, and reads an error body', async () => {
    const srv = await serve(async (req, res) => {
      await readBody(req);
      if (req.url === '/gz') {
        res
          .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-request-id': 'r1' })
          .end(gzipSync('{"fine":"yes"}'));
      } else {
        res.writeHead(503, 'Busy', { 'retry-after': '2' }).end('try later');
      }
    });
    cleanups.push(srv.close);
    const gz = await modelFetch(`${srv.url}/gz`);
    expect(gz.ok).toBe(true);
    expect(gz.headers.get('x-request-id')).toBe('r1');
    expect(await gz.json()).toEqual({ fine: 'yes' });
    await expect(gz.text()).rejects.toThrow(/already been read/);
    const busy = await modelFetch(`${srv.url}/busy`);
    expect([busy.ok, busy.status, busy.statusText, busy.headers.get('retry-after')]).toEqual([false, 503, 'Busy', '2']);
    expect(await busy.text()).toBe('try later');
  });

  it('a reader that stops early in a compressed answer closes its connection', async () => {
    let closed!: () => void;
    const gone = new Promise<void>((r) => (closed = r));
    const srv = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      const gzip = createGzip();
      gzip.pipe(res);
      gzip.write('data: {"x":1}\n\n');
      gzip.flush();
      req.socket.on('close', closed);
    });
    cleanups.push(srv.close);
    const res = await modelFetch(`${srv.url}/v1/s`, { method: 'POST', body: '{}' });
    for await (const chunk of res.body as unknown as AsyncIterable<Buffer>) {
      expect(Buffer.from(chunk).toString()).toContain('"x":1');
      break;
    }
    await gone;
  });

  it('leaves redirects and form uploads to the built-in fetch', async () => {
    const seen: string[] = [];
    const srv = await serve(async (req, res) => {
      const body = await readBody(req);
      seen.push(`${req.method} ${req.url} ${req.headers['content-type'] ?? '-'} ${body.length > 0}`);
      if (req.url === '/old') res.writeHead(307, { location: '/new' }).end();
      else res.writeHead(200, { 'content-type': 'text/plain' }).end(`at ${req.url}`);
    });
    cleanups.push(srv.close);
    const moved = await modelFetch(`${srv.url}/old`, { method: 'POST', body: '{"a":1}' });
    expect(await moved.text()).toBe('at /new');
    const form = new FormData();
    form.set('file', new Blob(['audio bytes']), 'voice.ogg');
    const uploaded = await modelFetch(`${srv.url}/upload`, { method: 'POST', body: form });
    expect(await uploaded.text()).toBe('at /upload');
    expect(seen.at(-1)).toMatch(/^POST \/upload multipart\/form-data; boundary=\S+ true$/);
    expect(seen.filter((s) => s.startsWith('POST /new'))).toHaveLength(1);
  });

  it('rejects when the endpoint cannot be reached, which the SDK reports as a connection error', async () => {
    const srv = await serve(() => {});
    const url = srv.url;
    await srv.close();
    await expect(modelFetch(`${url}/v1/x`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'k', fetch: modelFetch, maxRetries: 0 });
    await expect(
      client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'q' }] }),
    ).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
  });
});
