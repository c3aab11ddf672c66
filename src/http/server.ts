/**
 * One small HTTP server for everything on `SWITCHBOARD_HTTP_PORT`: `/healthz`, `/metrics`,
 * the Telegram webhook path and Slack's `/slack/events`. Channels register their own routes.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';

/** A route handler; it owns the response. The body has not been read. */
export type RouteHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

/** Routes by exact path; anything else is 404. */
export class HttpServer {
  private readonly routes = new Map<string, RouteHandler>();
  private server: http.Server | null = null;

  constructor(private readonly log: Logger) {}

  /** Register a handler for an exact path (any method). A second registration replaces the first. */
  route(pathname: string, handler: RouteHandler): void {
    this.routes.set(pathname, handler);
  }

  /** Start listening; resolves with the bound port (useful with port 0 in tests). */
  async listen(port: number, host = '127.0.0.1'): Promise<number> {
    const server = http.createServer((req, res) => {
      const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
      const handler = this.routes.get(pathname);
      if (!handler) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      Promise.resolve()
        .then(() => handler(req, res))
        .catch((err: unknown) => {
          this.log.error({ err, path: pathname }, 'http handler failed');
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
          res.end('internal error\n');
        });
    });
    this.server = server;
    server.listen(port, host);
    await once(server, 'listening');
    return (server.address() as AddressInfo).port;
  }

  /** Stop listening and close idle connections. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    server.closeIdleConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Read a request body fully, refusing more than `limit` bytes. */
export async function readBody(req: http.IncomingMessage, limit = 5 * 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new Error(`request body over ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
