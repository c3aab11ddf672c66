/**
 * A small HTTP load balancer on 127.0.0.1 for tests with several instances: each request goes to
 * the backend a chooser picks (from its body), and on to the next live backend when that one does
 * not answer (a killed instance), as a load balancer with health checks would.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running load balancer. */
export interface LoadBalancer {
  /** Base URL (`http://127.0.0.1:PORT`). */
  url: string;
  /** Backend base URLs by index; null while a backend is down. */
  backends: Array<string | null>;
  /** Requests answered, by backend index. */
  served: number[];
  close(): Promise<void>;
}

/**
 * Start a balancer. `choose` returns the preferred backend index for a request body (it may use
 * the body to route a request to a given instance); a failing backend is skipped.
 */
export async function startLoadBalancer(
  backends: Array<string | null>,
  choose: (body: string, n: number) => number,
): Promise<LoadBalancer> {
  const served = backends.map(() => 0);
  const lb: LoadBalancer = { url: '', backends, served, close: async () => {} };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const first = choose(body.toString('utf8'), lb.backends.length);
    for (let i = 0; i < lb.backends.length; i++) {
      const index = (first + i) % lb.backends.length;
      const base = lb.backends[index];
      if (!base) continue;
      try {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers))
          if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
        const r = await fetch(base + (req.url ?? '/'), {
          method: req.method,
          headers,
          body: req.method === 'GET' ? undefined : body,
        });
        const text = Buffer.from(await r.arrayBuffer());
        served[index] = (served[index] ?? 0) + 1;
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'text/plain' }).end(text);
        return;
      } catch {
        // Not answering (killed): the next backend takes the request.
      }
    }
    res.writeHead(502, { 'content-type': 'text/plain' }).end('no backend\n');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  lb.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  lb.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return lb;
}
