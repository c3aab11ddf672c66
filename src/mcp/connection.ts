/**
 * One MCP server connection: connect with a timeout, list tools (following pagination), refresh on
 * `notifications/tools/list_changed`, call tools with a timeout that progress extends, and keep
 * reconnecting with backoff after a failure or a crash. The tools of a server that went away stay
 * known, so their calls answer "server unavailable" instead of vanishing from the catalog.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { errorMessage } from '../errors.js';
import type { SourceState } from '../tools/source.js';
import type { McpServerConfig } from './config.js';

const LEADER = fileURLToPath(new URL('./group-leader.mjs', import.meta.url));
/** Safety cap on `tools/list` pages (a server whose cursor never ends). */
const MAX_PAGES = 100;
const STDERR_LINES = 20;

/** Raised when a call reaches a server that is not connected. */
export class ServerUnavailableError extends Error {}

/** Timing of a connection; defaults suit production, tests shorten them. */
export interface ConnectionOptions {
  connectTimeoutMs: number;
  maxRetryMs: number;
  /** First reconnect delay; doubles per failed attempt up to `maxRetryMs`. Default 1000. */
  baseRetryMs?: number;
  log: Logger;
  version: string;
}

/** A connection to one configured server. */
export class McpConnection {
  state: SourceState = 'connecting';
  tools: McpTool[] = [];
  lastError: string | undefined;
  retryAt: number | undefined;
  readonly kind: 'stdio' | 'http';
  /** `sse` once the HTTP server turned out to speak only the old SSE transport. */
  httpMode: 'streamable' | 'sse' = 'streamable';
  /** Pid of the stdio group leader while connected (tests check for orphans with it). */
  pid: number | null = null;
  private client: Client | null = null;
  /** A `tools/list` reload after list_changed, while it runs. */
  private reloading: Promise<void> | null = null;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly stderrTail: string[] = [];
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly options: ConnectionOptions,
  ) {
    this.kind = config.command ? 'stdio' : 'http';
  }

  /** Listen for changes of `tools` or `state`. */
  onChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  /** First connection attempt; on failure retries are scheduled and this still resolves. */
  async start(): Promise<void> {
    await this.attempt();
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  private async attempt(): Promise<void> {
    if (this.closed) return;
    this.retryTimer = null;
    this.retryAt = undefined;
    this.state = 'connecting';
    let client: Client | null = null;
    const timeout = this.options.connectTimeoutMs;
    try {
      client = await withTimeout(this.open(timeout), timeout, `no answer within ${timeout / 1000} s`, (c) => void c.close());
      if (this.closed) {
        await client.close();
        return;
      }
      const tools = await this.listAll(client);
      this.client = client;
      this.tools = tools;
      this.failures = 0;
      this.lastError = undefined;
      this.state = 'ready';
      const watched = client;
      client.onclose = () => this.lost(watched);
      this.options.log.info({ server: this.name, tools: tools.length }, 'MCP server connected');
      this.changed();
    } catch (err) {
      await client?.close().catch(() => {});
      const tail = this.stderrTail.at(-1);
      this.lastError = tail ? `${errorMessage(err)} (stderr: ${tail})` : errorMessage(err);
      this.options.log.warn({ server: this.name, error: this.lastError }, 'MCP server failed to connect');
      this.state = 'failed';
      this.scheduleRetry();
      this.changed();
    }
  }

  /** Open a transport and initialise; HTTP tries Streamable HTTP first, then the old SSE transport. */
  private async open(timeout: number): Promise<Client> {
    if (this.kind === 'stdio') return this.initialise(this.stdioTransport(), timeout);
    const url = new URL(this.config.url as string);
    const requestInit = { headers: this.config.headers };
    if (this.httpMode === 'streamable') {
      try {
        return await this.initialise(new StreamableHTTPClientTransport(url, { requestInit }), timeout);
      } catch (err) {
        // Old servers answer the Streamable HTTP POST with 4xx; a network error will not improve over SSE.
        const status = err instanceof StreamableHTTPError ? err.code : undefined;
        if (status === undefined || status < 400 || status >= 500) throw err;
        try {
          const client = await this.initialise(new SSEClientTransport(url, { requestInit }), timeout);
          this.httpMode = 'sse';
          return client;
        } catch {
          throw err;
        }
      }
    }
    return this.initialise(new SSEClientTransport(url, { requestInit }), timeout);
  }

  private async initialise(transport: Transport, timeout: number): Promise<Client> {
    const client = new Client(
      { name: 'switchboard', version: this.options.version },
      {
        capabilities: {},
        listChanged: {
          tools: {
            autoRefresh: false,
            // No debounce: a reload started before a call's response arrives is awaited by the
            // call, so the model's next round already sees the new list.
            debounceMs: 0,
            onChanged: () => {
              const reload = this.reloadTools(client).finally(() => {
                if (this.reloading === reload) this.reloading = null;
              });
              this.reloading = reload;
            },
          },
        },
      },
    );
    try {
      await client.connect(transport, { timeout });
    } catch (err) {
      await client.close().catch(() => {});
      throw err;
    }
    return client;
  }

  private stdioTransport(): StdioClientTransport {
    const cfg = this.config;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [LEADER, JSON.stringify([cfg.command, ...cfg.args])],
      env: { ...getDefaultEnvironment(), ...cfg.env },
      cwd: cfg.cwd,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        this.stderrTail.push(line.slice(0, 500));
        if (this.stderrTail.length > STDERR_LINES) this.stderrTail.shift();
        this.options.log.debug({ server: this.name, line }, 'MCP server stderr');
      }
    });
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      this.pid = transport.pid;
    };
    return transport;
  }

  /** Every page of `tools/list`. */
  private async listAll(client: Client): Promise<McpTool[]> {
    const all: McpTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.options.connectTimeoutMs });
      all.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return all;
  }

  private async reloadTools(client: Client): Promise<void> {
    if (this.client !== client) return;
    try {
      this.tools = await this.listAll(client);
      this.options.log.info({ server: this.name, tools: this.tools.length }, 'MCP tool list changed');
      this.changed();
    } catch (err) {
      this.options.log.warn({ server: this.name, err: errorMessage(err) }, 'MCP tool list refresh failed');
    }
  }

  /** The connection closed under us (the server crashed or the HTTP session ended). */
  private lost(client: Client): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    this.pid = null;
    this.state = 'disconnected';
    const tail = this.stderrTail.at(-1);
    this.lastError = tail ? `connection closed (stderr: ${tail})` : 'connection closed';
    this.options.log.warn({ server: this.name, error: this.lastError }, 'MCP server disconnected; reconnecting');
    // The first reconnect after a crash is immediate: the server was healthy a moment ago.
    this.scheduleRetry(this.failures === 0 ? 0 : undefined);
    this.changed();
  }

  private scheduleRetry(delayMs?: number): void {
    if (this.closed || this.retryTimer) return;
    const base = this.options.baseRetryMs ?? 1000;
    const backoff = Math.min(this.options.maxRetryMs, base * 2 ** this.failures);
    // ±20 % jitter so servers that failed together do not retry in lockstep.
    const delay = delayMs ?? Math.round(backoff * (0.8 + Math.random() * 0.4));
    this.failures++;
    this.retryAt = Date.now() + delay;
    this.retryTimer = setTimeout(() => void this.attempt(), delay);
    this.retryTimer.unref();
  }

  /**
   * Call a tool. The timeout restarts on every progress notification; aborting `signal` (stop) and
   * the timeout both send `notifications/cancelled` to the server.
   * @throws ServerUnavailableError when not connected; the SDK's McpError on protocol errors.
   */
  async call(
    tool: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; onProgress?: (progress: number, total: number | undefined, message?: string) => void },
  ): Promise<CallToolResult> {
    const client = this.client;
    if (!client || this.state !== 'ready') {
      throw new ServerUnavailableError(`MCP server "${this.name}" is unavailable (${this.state}${this.lastError ? `: ${this.lastError}` : ''})`);
    }
    // The SDK never removes its listener from the signal it is given; a turn's signal outlives many
    // calls, so each call gets a signal of its own, linked for as long as the call runs.
    const local = new AbortController();
    const forward = () => local.abort(options.signal.reason);
    if (options.signal.aborted) forward();
    else options.signal.addEventListener('abort', forward, { once: true });
    try {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, {
        signal: local.signal,
        timeout: this.config.timeout_seconds * 1000,
        resetTimeoutOnProgress: true,
        onprogress: (p) => options.onProgress?.(p.progress, p.total, p.message),
      });
      if (this.reloading) await this.reloading;
      return result as CallToolResult;
    } finally {
      options.signal.removeEventListener('abort', forward);
    }
  }

  /** Stop retrying and close the transport (a stdio server's group is terminated). */
  async close(): Promise<void> {
    this.closed = true;
    this.state = 'closed';
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    await client?.close().catch(() => {});
  }
}

/** Race `work` against a timer; a late result is disposed of with `dispose`. */
async function withTimeout<T>(work: Promise<T>, ms: number, message: string, dispose: (value: T) => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new Error(message));
    }, ms);
  });
  work.then((v) => timedOut && dispose(v), () => {});
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
