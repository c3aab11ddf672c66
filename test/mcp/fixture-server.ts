/**
 * A real MCP server made with the SDK's server API, for the MCP client tests. Run directly it
 * serves stdio (`node --import tsx test/mcp/fixture-server.ts`); {@link startHttpFixture} serves
 * the same tools over Streamable HTTP on 127.0.0.1, port 0.
 *
 * Environment (stdio): FIXTURE_LOG — a file where the server appends what it saw (`pid N`,
 * `called NAME`, `cancelled NAME`), so a test can check the server's side of things;
 * FIXTURE_RESTART_GATE — when the log shows an earlier start, wait for this file to exist before serving;
 * FIXTURE_STUBBORN — keep running after stdin closes.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';

/** A 1×1 transparent PNG. */
export const PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
/** Tools per `tools/list` page (small, so pagination is exercised). */
export const PAGE_SIZE = 3;
export const LONG_TOOL = `a_tool_with_a_very_long_name_${'x'.repeat(60)}`;

const obj = (properties: Record<string, object> = {}, required: string[] = []) => ({
  type: 'object' as const,
  properties,
  required,
});

const baseTools: Tool[] = [
  { name: 'echo', description: 'Echo the text back', inputSchema: obj({ text: { type: 'string' } }, ['text']) },
  { name: 'image', description: 'Return a tiny image', inputSchema: obj(), annotations: { readOnlyHint: true } },
  { name: 'fail', description: 'Always answers with isError', inputSchema: obj() },
  {
    name: 'slow',
    description: 'Waits, reporting progress, until cancelled or done',
    inputSchema: obj({ seconds: { type: 'number' }, quiet: { type: 'boolean' }, progress_ms: { type: 'number' } }),
  },
  { name: 'crash', description: 'Exits the server process mid-call', inputSchema: obj() },
  { name: 'add_tool', description: 'Adds the tool "extra" and announces list_changed', inputSchema: obj() },
  { name: 'big', description: 'Returns 200 000 characters', inputSchema: obj() },
  { name: 'dotted.name', description: 'A name with a dot (sanitised to dotted_name)', inputSchema: obj() },
  { name: 'dotted_name', description: 'Collides with dotted.name after sanitising', inputSchema: obj() },
  { name: LONG_TOOL, description: 'A name over 64 characters', inputSchema: obj() },
];

/** Options of one fixture server instance. */
export interface FixtureOptions {
  /** Called with each event the server sees (`called echo`, `cancelled slow`). */
  record: (line: string) => void;
  /** What the `crash` tool does (stdio: exit the process). */
  crash: () => void;
}

/** Build one server instance (one per stdio process or HTTP session). */
export function createFixtureServer(options: FixtureOptions): Server {
  const tools = [...baseTools];
  const server = new Server({ name: 'fixture', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, async (req) => {
    const start = Number(req.params?.cursor ?? 0);
    const page = tools.slice(start, start + PAGE_SIZE);
    const next = start + PAGE_SIZE < tools.length ? String(start + PAGE_SIZE) : undefined;
    return { tools: page, nextCursor: next };
  });
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const name = req.params.name;
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    options.record(`called ${name}`);
    switch (name) {
      case 'echo':
        return { content: [{ type: 'text', text: `echo: ${String(args.text)}` }] };
      case 'extra':
        return { content: [{ type: 'text', text: 'extra tool ran' }] };
      case 'image':
        return {
          content: [
            { type: 'text', text: 'here is a pixel' },
            { type: 'image', data: PIXEL_PNG, mimeType: 'image/png' },
          ],
        };
      case 'fail':
        return { content: [{ type: 'text', text: 'the thing is broken' }], isError: true };
      case 'big':
        return { content: [{ type: 'text', text: 'y'.repeat(200_000) }] };
      case 'crash':
        options.crash();
        return { content: [{ type: 'text', text: 'unreachable' }] };
      case 'add_tool':
        if (!tools.some((t) => t.name === 'extra'))
          tools.push({ name: 'extra', description: 'Added at run time', inputSchema: obj() });
        await server.sendToolListChanged();
        return { content: [{ type: 'text', text: 'added' }] };
      case 'slow': {
        const seconds = Number(args.seconds ?? 30);
        // A progress notification every `progress_ms` (default 500), in the loop's 100 ms ticks.
        const every = Math.max(1, Math.round(Number(args.progress_ms ?? 500) / 100));
        const token = req.params._meta?.progressToken;
        for (let i = 0; i < seconds * 10; i++) {
          if (extra.signal.aborted) {
            options.record('cancelled slow');
            return { content: [{ type: 'text', text: 'cancelled' }] };
          }
          if (token !== undefined && !args.quiet && i % every === 0) {
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: i, total: seconds * 10, message: 'working' },
            });
          }
          await new Promise((r) => setTimeout(r, 100));
        }
        return { content: [{ type: 'text', text: 'slow done' }] };
      }
      default:
        return { content: [{ type: 'text', text: `unknown tool ${name}` }], isError: true };
    }
  });
  return server;
}

/** A fixture served over Streamable HTTP. */
export interface HttpFixture {
  url: string;
  events: string[];
  close(): Promise<void>;
}

/** Serve the fixture over Streamable HTTP (stateful sessions) on 127.0.0.1, port 0. */
export async function startHttpFixture(): Promise<HttpFixture> {
  const events: string[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const httpServer = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const sid = req.headers['mcp-session-id'] as string | undefined;
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport) {
      if (req.method !== 'POST' || sid) {
        res.writeHead(sid ? 404 : 400).end();
        return;
      }
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id: string): void => {
          transports.set(id, created);
        },
      });
      created.onclose = () => {
        if (created.sessionId) transports.delete(created.sessionId);
      };
      const server = createFixtureServer({ record: (l) => events.push(l), crash: () => void created.close() });
      await server.connect(created);
      transport = created;
    }
    await (transport as StreamableHTTPServerTransport).handleRequest(req, res, body);
  });
  httpServer.listen(0, '127.0.0.1');
  await new Promise((r) => httpServer.once('listening', r));
  const port = (httpServer.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    events,
    async close() {
      for (const t of transports.values()) await t.close().catch(() => {});
      httpServer.closeAllConnections();
      await new Promise((r) => httpServer.close(r));
    },
  };
}

// Run as a stdio server when executed directly.
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() as string)) {
  const log = process.env.FIXTURE_LOG;
  const record = (line: string) => {
    if (log) appendFileSync(log, `${line}\n`);
  };
  // A restarted server can be held back until the test lets it come (the "unavailable meanwhile" test).
  const restarted = log && existsSync(log) && readFileSync(log, 'utf8').includes('pid ');
  const gate = process.env.FIXTURE_RESTART_GATE;
  if (restarted && gate) {
    record('held');
    while (!existsSync(gate)) await new Promise((r) => setTimeout(r, 20));
  }
  record(`pid ${process.pid}`);
  // Keeps the process alive even when stdin closes: the orphan test relies on the group leader.
  if (process.env.FIXTURE_STUBBORN) {
    process.on('SIGHUP', () => {});
    setInterval(() => {}, 1 << 30);
  }
  const server = createFixtureServer({ record, crash: () => process.exit(3) });
  await server.connect(new StdioServerTransport());
}
