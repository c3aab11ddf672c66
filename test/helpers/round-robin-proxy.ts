/**
 * A round-robin HTTP reverse proxy on 127.0.0.1 for tests with several instances behind one
 * address, as a load balancer without sticky sessions does it: each new client connection goes to
 * the next live backend and stays there (keep-alive), so a browser's event stream and its POSTs
 * may land on different instances. Responses are streamed through unbuffered (Server-Sent Events);
 * a backend that dies mid-response cuts the client's connection, and a connection whose backend
 * no longer answers moves to the next live one, as health checks would do.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** The header that tells a test which backend answered (the slot's index). */
export const BACKEND_HEADER = 'x-test-backend';

/** A running proxy. */
export interface RoundRobinProxy {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** Backend base URLs by slot; null while that instance is down. */
  backends: Array<string | null>;
  /** Requests answered, in order, with the slot that answered each and the request's cookies. */
  served: Array<{ method: string; path: string; backend: number; cookie: string }>;
  close(): Promise<void>;
}

/** Start a proxy in front of `backends` (slots may be filled in later). */
export async function startRoundRobinProxy(backends: Array<string | null>): Promise<RoundRobinProxy> {
  const proxy: RoundRobinProxy = { url: '', backends, served: [], close: async () => {} };
  const slotOf = new WeakMap<Socket, number>();
  let cursor = 0;
  /** The next live slot after the cursor (round robin), or -1 when none is up. */
  const nextLive = (): number => {
    for (let i = 0; i < proxy.backends.length; i++) {
      const slot = (cursor + i) % proxy.backends.length;
      if (proxy.backends[slot]) {
        cursor = slot + 1;
        return slot;
      }
    }
    return -1;
  };

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    for (let attempt = 0; attempt < proxy.backends.length; attempt++) {
      let slot = slotOf.get(req.socket) ?? -1;
      if (slot < 0 || !proxy.backends[slot]) {
        slot = nextLive();
        slotOf.set(req.socket, slot);
      }
      const base = slot >= 0 ? proxy.backends[slot] : null;
      if (!base) break;
      const upstream = await forward(base, req, body).catch(() => null);
      if (!upstream) {
        // Refused: the instance is gone; this connection moves to the next live one.
        slotOf.delete(req.socket);
        if (proxy.backends[slot] === base) cursor = slot + 1;
        continue;
      }
      proxy.served.push({
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        backend: slot,
        cookie: req.headers.cookie ?? '',
      });
      const headers: http.OutgoingHttpHeaders = { ...upstream.headers, [BACKEND_HEADER]: String(slot) };
      for (const hop of ['connection', 'keep-alive', 'transfer-encoding']) delete headers[hop];
      res.writeHead(upstream.statusCode ?? 502, headers);
      res.flushHeaders();
      // Streamed as it comes; a backend killed mid-response cuts the client off (it reconnects).
      upstream.on('data', (chunk: Buffer) => res.write(chunk));
      upstream.on('end', () => res.end());
      upstream.on('error', () => res.destroy());
      upstream.on('aborted', () => res.destroy());
      res.on('close', () => upstream.destroy());
      return;
    }
    res.writeHead(502, { 'content-type': 'text/plain' }).end('no backend\n');
  });
  // Connections are kept as long as clients keep them (a balancer's idle timeout is long).
  server.keepAliveTimeout = 120_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}

/** Send one request to `base` (a new connection each time); resolves once the response headers came. */
function forward(base: string, req: http.IncomingMessage, body: Buffer): Promise<http.IncomingMessage> {
  const target = new URL(req.url ?? '/', base);
  return new Promise((resolve, reject) => {
    const headers = { ...req.headers, 'content-length': String(body.length) };
    delete headers['transfer-encoding'];
    delete headers.connection;
    const out = http.request(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, method: req.method, headers },
      resolve,
    );
    out.on('error', reject);
    out.end(body);
  });
}
