/**
 * A small web server on 127.0.0.1 for `web_fetch` and `web_search` tests: HTML and text pages,
 * a binary file, a large page, redirects (to any URL, or looping), a slow page, and JSON search
 * APIs shaped like SearXNG, Tavily and Brave. Records every request.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

/** A running test web server. */
export interface WebServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  /** Paths (with query) requested so far. */
  requests: { path: string; headers: http.IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

const PAGE = `<!doctype html><html><head><title>Test Page</title><style>body{color:red}</style>
<script>var secret = "do not show";</script></head>
<body><nav>Home | About</nav><h1>Welcome</h1><p>The answer is <b>42</b>.</p>
<ul><li>first item</li><li>second item</li></ul><a href="/docs">Read the docs</a><img src="x.png" alt="pic"></body></html>`;

/** Start the server. */
export async function startWebServer(): Promise<WebServer> {
  const requests: WebServer['requests'] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      const url = new URL(req.url ?? '/', 'http://x');
      switch (url.pathname) {
        case '/page.html':
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
          return;
        case '/text':
          res.writeHead(200, { 'content-type': 'text/plain' }).end('plain text body\n');
          return;
        case '/latin1':
          res
            .writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' })
            .end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
          return;
        case '/gzip':
          res
            .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
            .end(gzipSync(`compressed ${'z'.repeat(Number(url.searchParams.get('n') ?? 10))}`));
          return;
        case '/image.png':
          res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]));
          return;
        case '/big':
          res
            .writeHead(200, { 'content-type': 'text/plain' })
            .end('b'.repeat(Number(url.searchParams.get('n') ?? 100_000)));
          return;
        case '/missing':
          res.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
          return;
        case '/redirect':
          res.writeHead(302, { location: url.searchParams.get('to') ?? '/text' }).end();
          return;
        case '/loop': {
          const n = Number(url.searchParams.get('n') ?? 0);
          res.writeHead(302, { location: `/loop?n=${n + 1}` }).end();
          return;
        }
        case '/slow':
          setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('late'), 30_000).unref();
          return;
        case '/searxng/search':
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              results: Array.from({ length: 30 }, (_, i) => ({
                title: `Result ${i + 1} for ${url.searchParams.get('q')}`,
                url: `https://example.com/${i + 1}`,
                content: `snippet ${i + 1}`,
              })),
            }),
          );
          return;
        case '/tavily/search': {
          const q = JSON.parse(body || '{}') as { query?: string; max_results?: number };
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              results: Array.from({ length: q.max_results ?? 5 }, (_, i) => ({
                title: `T${i + 1} ${q.query}`,
                url: `https://t.example/${i + 1}`,
                content: `tavily ${i + 1}`,
              })),
            }),
          );
          return;
        }
        case '/brave/res/v1/web/search':
          if (req.headers['x-subscription-token'] !== 'brave-key') {
            res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"bad key"}');
            return;
          }
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              web: {
                results: [
                  {
                    title: 'Brave <strong>one</strong>',
                    url: 'https://b.example/1',
                    description: 'brave <strong>snippet</strong>',
                  },
                ],
              },
            }),
          );
          return;
        default:
          res.writeHead(404).end();
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
