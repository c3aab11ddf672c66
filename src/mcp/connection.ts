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
import {
  type CallToolResult,
  CreateMessageRequestSchema,
  type CreateMessageRequest,
  type CreateMessageResult,
  ElicitRequestSchema,
  type ElicitRequest,
  type ElicitResult,
  ListRootsRequestSchema,
  ErrorCode,
  McpError,
  type Tool as McpTool,
  type Root,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { errorMessage, networkCause } from '../errors.js';
import { callAsTask } from './tasks.js';
import { IdleTimer, isUnknownSession, toRoot, UNBOUNDED_MS, withTimeout } from './timing.js';
import type { SourceState } from '../tools/source.js';
import type { McpServerConfig } from '../config-mcp.js';
import { backoffMs } from '../backoff.js';

export { isUnknownSession, toRoot } from './timing.js';

const LEADER = fileURLToPath(new URL('./group-leader.mjs', import.meta.url));
/** Safety cap on `tools/list` pages (a server whose cursor never ends). */
const MAX_PAGES = 100;
const STDERR_LINES = 20;

/** Raised when a call reaches a server that is not connected. */
export class ServerUnavailableError extends Error {}

/** A tool call in flight on a connection; requests the server sends meanwhile are attributed to it. */
export interface CallScope<T = unknown> {
  /** The conversation of the call. */
  readonly key: string;
  /** What the host needs to reach the conversation (the tool context). */
  readonly owner: T;
  readonly signal: AbortSignal;
  /** Pause the call's timeout while the user is asked (elicitation, sampling); call the result to resume. */
  hold(): () => void;
}

/**
 * What the host does for a server's own requests (elicitation, sampling). Each gets the tool call
 * it arrived during, or null when no call of this server was running (then it is declined).
 */
export interface McpHost<T = unknown> {
  elicit(
    server: string,
    params: ElicitRequest['params'],
    scope: CallScope<T> | null,
    signal: AbortSignal,
  ): Promise<ElicitResult>;
  sample(
    server: string,
    params: CreateMessageRequest['params'],
    scope: CallScope<T> | null,
    signal: AbortSignal,
  ): Promise<CreateMessageResult>;
}

/** Timing of a connection; defaults suit production, tests shorten them. */
export interface ConnectionOptions {
  connectTimeoutMs: number;
  maxRetryMs: number;
  /** First reconnect delay; doubles per failed attempt up to `maxRetryMs`. Default 1000. */
  baseRetryMs?: number;
  log: Logger;
  version: string;
  /** Roots offered when the server has no `roots` of its own: the workspace folder. */
  defaultRoots?: Root[];
  /** Answers elicitation and sampling; without one both are declined. */
  host?: McpHost;
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
  /** The server's `instructions` from `initialize`, as sent. */
  instructions: string | undefined;
  /** What the server said it offers in `initialize` (resources, prompts, …). */
  capabilities: ServerCapabilities | undefined;
  /** Roots answered to `roots/list`. */
  roots: Root[];
  private client: Client | null = null;
  /** A new HTTP session being opened after the old one was lost, while it runs. */
  private renewing: Promise<Client> | null = null;
  /** Tool calls in flight, newest last: server requests meanwhile belong to one of them. */
  private readonly inFlight: CallScope[] = [];
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
    this.roots = config.roots ? config.roots.map(toRoot) : (options.defaultRoots ?? []);
  }

  /** Replace the roots and tell the server (`notifications/roots/list_changed`). */
  async setRoots(roots: Root[]): Promise<void> {
    this.roots = roots;
    await this.client?.sendRootsListChanged().catch((err) => {
      this.options.log.warn({ server: this.name, err: errorMessage(err) }, 'MCP roots change not sent');
    });
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
      client = await withTimeout(
        this.open(timeout),
        timeout,
        `no answer within ${timeout / 1000} s`,
        (c) => void c.close(),
      );
      if (this.closed) {
        await client.close();
        return;
      }
      const tools = await this.listAll(client);
      this.client = client;
      this.tools = tools;
      this.instructions = client.getInstructions();
      this.capabilities = client.getServerCapabilities();
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
      const why = this.config.url ? `${new URL(this.config.url).host}: ${networkCause(err)}` : errorMessage(err);
      this.lastError = tail ? `${why} (stderr: ${tail})` : why;
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
        // Servers show their sampling, elicitation and roots features only to clients that say so.
        capabilities: {
          sampling: {},
          elicitation: { form: {}, url: {} },
          roots: { listChanged: true },
        },
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
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: this.roots }));
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      const host = this.options.host;
      if (!host) return { action: 'decline' };
      const scope = this.currentScope();
      const resume = scope?.hold();
      try {
        return await host.elicit(this.name, request.params, scope, extra.signal);
      } finally {
        resume?.();
      }
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
      const host = this.options.host;
      if (!host) throw new McpError(-1, 'sampling is not available in this client');
      const scope = this.currentScope();
      const resume = scope?.hold();
      try {
        return await host.sample(this.name, request.params, scope, extra.signal);
      } finally {
        resume?.();
      }
    });
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
      const result = await client.listTools(cursor ? { cursor } : undefined, {
        timeout: this.options.connectTimeoutMs,
      });
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
    const backoff = backoffMs(this.failures, this.options.baseRetryMs ?? 1000, this.options.maxRetryMs);
    // ±20 % jitter so servers that failed together do not retry in lockstep.
    const delay = delayMs ?? Math.round(backoff * (0.8 + Math.random() * 0.4));
    this.failures++;
    this.retryAt = Date.now() + delay;
    this.retryTimer = setTimeout(() => void this.attempt(), delay);
    this.retryTimer.unref();
  }

  /**
   * Call a tool. The timeout restarts on every progress notification; aborting `signal` (stop) and
   * the timeout both send `notifications/cancelled` to the server. A tool that requires task-based
   * execution is run as a task: its status messages are progress, and stop cancels the task.
   * @throws ServerUnavailableError when not connected; the SDK's McpError on protocol errors.
   */
  async call(
    tool: string,
    args: Record<string, unknown>,
    options: {
      signal: AbortSignal;
      onProgress?: (progress: number, total: number | undefined, message?: string) => void;
      /** Requests the server sends during the call (elicitation, sampling) go to this owner. */
      scope?: { key: string; owner: unknown };
    },
  ): Promise<CallToolResult> {
    // The SDK never removes its listener from the signal it is given; a turn's signal outlives many
    // calls, so each call gets a signal of its own, linked for as long as the call runs.
    const local = new AbortController();
    const forward = () => local.abort(options.signal.reason);
    if (options.signal.aborted) forward();
    else options.signal.addEventListener('abort', forward, { once: true });
    const timeoutMs = this.config.timeout_seconds * 1000;
    // Our own idle timer instead of the SDK's: progress restarts it, and it stands still while the
    // server waits for the user (a question card may rightly take longer than a quiet call).
    const watchdog = new IdleTimer(timeoutMs, () =>
      local.abort(new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: timeoutMs })),
    );
    const onProgress = (p: number, total: number | undefined, message?: string) => {
      watchdog.touch();
      options.onProgress?.(p, total, message);
    };
    const scope: CallScope | undefined = options.scope
      ? { ...options.scope, signal: local.signal, hold: () => watchdog.hold() }
      : undefined;
    if (scope) this.inFlight.push(scope);
    try {
      const required = this.tools.find((t) => t.name === tool)?.execution?.taskSupport === 'required';
      const result = await this.use((client) =>
        required
          ? callAsTask(client, { server: this.name, log: this.options.log }, tool, args, local.signal, onProgress)
          : this.callPlain(client, tool, args, local.signal, onProgress),
      );
      if (this.reloading) await this.reloading;
      return result;
    } finally {
      watchdog.stop();
      if (scope) this.inFlight.splice(this.inFlight.indexOf(scope), 1);
      options.signal.removeEventListener('abort', forward);
    }
  }

  private async callPlain(
    client: Client,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    onProgress?: (progress: number, total: number | undefined, message?: string) => void,
  ): Promise<CallToolResult> {
    const result = await client.callTool({ name: tool, arguments: args }, undefined, {
      signal,
      timeout: UNBOUNDED_MS,
      onprogress: (p) => onProgress?.(p.progress, p.total, p.message),
    });
    return result as CallToolResult;
  }

  /**
   * Run a request on the live client. A Streamable HTTP server that no longer knows the session
   * (404, or 400 naming the session: it restarted) never saw the request, so a new session is
   * opened once and the request sent again; if that fails too, the error says so.
   * @throws ServerUnavailableError when not connected.
   */
  async use<T>(work: (client: Client) => Promise<T>): Promise<T> {
    const client = this.client;
    if (!client || this.state !== 'ready') {
      throw new ServerUnavailableError(
        `MCP server "${this.name}" is unavailable (${this.state}${this.lastError ? `: ${this.lastError}` : ''})`,
      );
    }
    try {
      return await work(client);
    } catch (err) {
      if (this.kind !== 'http' || !isUnknownSession(err)) throw err;
      this.options.log.warn(
        { server: this.name, err: errorMessage(err) },
        'MCP session unknown to the server; opening a new one',
      );
      let fresh: Client;
      try {
        fresh = await this.renew(client);
      } catch (renewErr) {
        const status = renewErr instanceof StreamableHTTPError ? ` (HTTP ${renewErr.code})` : '';
        throw new ServerUnavailableError(
          `MCP server "${this.name}" lost the session and a new one could not be opened${status}: ${errorMessage(renewErr)}`,
        );
      }
      try {
        return await work(fresh);
      } catch (retryErr) {
        if (isUnknownSession(retryErr)) {
          throw new ServerUnavailableError(
            `MCP server "${this.name}" rejected the new session as well: ${errorMessage(retryErr)}`,
          );
        }
        throw retryErr;
      }
    }
  }

  /** Replace a client whose session the server lost; concurrent callers share one new session. */
  private renew(old: Client): Promise<Client> {
    if (this.client !== old && this.client) return Promise.resolve(this.client);
    if (this.renewing) return this.renewing;
    const timeout = this.options.connectTimeoutMs;
    const renewing = (async () => {
      const client = await withTimeout(
        this.open(timeout),
        timeout,
        `no answer within ${timeout / 1000} s`,
        (c) => void c.close(),
      );
      const tools = await this.listAll(client);
      this.client = client;
      this.tools = tools;
      this.instructions = client.getInstructions();
      this.capabilities = client.getServerCapabilities();
      client.onclose = () => this.lost(client);
      // The old client's close must not count as a lost connection: it is no longer ours.
      void old.close().catch(() => {});
      this.options.log.info({ server: this.name, tools: tools.length }, 'MCP session renewed');
      this.changed();
      return client;
    })().finally(() => {
      this.renewing = null;
    });
    this.renewing = renewing;
    return renewing;
  }

  /**
   * The call a server request belongs to: the only one in flight, or the newest when every call in
   * flight serves the same conversation. Calls of several conversations at once are ambiguous (a
   * server over stdio does not say which call it asks for), so then none is chosen.
   */
  private currentScope(): CallScope | null {
    const newest = this.inFlight.at(-1);
    if (!newest) return null;
    const key = newest.key;
    return this.inFlight.every((s) => s.key === key) ? newest : null;
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
