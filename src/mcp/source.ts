/**
 * One MCP server as a {@link ToolSource}: its tools as ordinary registry tools named
 * `mcp__<server>__<tool>`, asking for approval by default, each call a round trip to the server.
 */
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { errorMessage } from '../errors.js';
import { clip } from '../tools/define.js';
import type { SourceStatus, ToolSource } from '../tools/source.js';
import type { AnyTool, PromptSection, ToolContext, ToolResult } from '../tools/types.js';
import type { McpServerConfig } from '../config-mcp.js';
import { McpConnection, type McpHost, ServerUnavailableError } from './connection.js';
import { mcpToolName } from './naming.js';
import { servePrompts, stopServingPrompts } from './prompts.js';
import { resourceTools } from './resources.js';
import { convertResult } from './results.js';
import type { Root } from '@modelcontextprotocol/sdk/types.js';

/** Longest description sent to the model; some servers ship essays. */
const MAX_DESCRIPTION = 1024;

/** Options shared by every server's source. */
export interface McpSourceOptions {
  connectTimeoutMs: number;
  maxRetryMs: number;
  baseRetryMs?: number;
  maxResultChars: number;
  log: Logger;
  version: string;
  /** Roots for servers without `roots` of their own (the workspace). */
  defaultRoots?: Root[];
  host?: McpHost;
}

/** A server's tools as a tool source. */
export class McpToolSource implements ToolSource {
  readonly name: string;
  readonly connection: McpConnection;
  readonly lazy?: { name: string; description: string };

  constructor(
    readonly server: string,
    readonly config: McpServerConfig,
    private readonly options: McpSourceOptions,
  ) {
    this.name = `mcp:${server}`;
    if (config.lazy)
      this.lazy = { name: server, description: config.description || `tools of the MCP server ${server}` };
    this.connection = new McpConnection(server, config, {
      connectTimeoutMs: options.connectTimeoutMs,
      maxRetryMs: options.maxRetryMs,
      baseRetryMs: options.baseRetryMs,
      log: options.log,
      version: options.version,
      defaultRoots: options.defaultRoots,
      host: options.host,
    });
    servePrompts(this);
  }

  /** The server's instructions, labelled and capped, for the system prompt (stable while connected). */
  readonly promptSection: PromptSection = async () => {
    const text = this.connection.instructions?.trim();
    const cap = this.config.max_instructions_chars;
    if (!text || cap === 0) return null;
    const body =
      text.length > cap ? `${text.slice(0, cap)}\n[instructions cut at ${cap} of ${text.length} characters]` : text;
    return `Instructions of the MCP server "${this.server}" (its tools are mcp__${this.server}__*):\n${body}`;
  };

  connect(): Promise<void> {
    return this.connection.start();
  }

  onToolsChanged(listener: () => void): void {
    this.connection.onChange(listener);
  }

  async listTools(): Promise<AnyTool[]> {
    const tools = this.connection.tools.map((t) => this.adapt(t));
    if (this.connection.capabilities?.resources) {
      tools.push(
        ...resourceTools({
          server: this.server,
          connection: this.connection,
          lazyGroup: this.config.lazy ? this.server : undefined,
          source: this.name,
          run: (ctx, work) => this.guard(ctx, 'resources', work),
          convert: (result, ctx) => convertResult(result, ctx, this.server, this.options.maxResultChars),
        }),
      );
    }
    return tools;
  }

  /** Run a server round trip; failures become text the model can act on. */
  private async guard(ctx: ToolContext, what: string, work: () => Promise<ToolResult>): Promise<ToolResult> {
    try {
      return await work();
    } catch (err) {
      if (ctx.signal.aborted) return { output: 'Cancelled.', status: 'failed' };
      if (err instanceof ServerUnavailableError)
        return { output: `Error: ${err.message}. Try again later or use another tool.`, status: 'failed' };
      return { output: `Error: MCP server "${this.server}", ${what}: ${errorMessage(err)}`, status: 'failed' };
    }
  }

  status(): SourceStatus {
    const c = this.connection;
    return {
      name: this.name,
      state: c.state,
      kind: c.kind === 'stdio' ? 'stdio' : c.httpMode === 'sse' ? 'sse' : 'http',
      tools: [],
      error: c.lastError,
      retryAt: c.retryAt,
      lazyGroup: this.config.lazy ? this.server : undefined,
    };
  }

  close(): Promise<void> {
    stopServingPrompts(this);
    return this.connection.close();
  }

  private adapt(tool: McpTool): AnyTool {
    const server = this.server;
    const readOnly = tool.annotations?.readOnlyHint === true;
    const title = tool.annotations?.title ?? tool.title;
    const labelOf = (args: Record<string, unknown>): string => {
      const first = Object.values(args ?? {}).find((v) => typeof v === 'string' || typeof v === 'number');
      return `${server}.${tool.name}${first !== undefined ? ` ${String(first)}` : ''}`;
    };
    return {
      name: mcpToolName(server, tool.name),
      description: clip(tool.description ?? title ?? `${tool.name} (MCP server ${server})`, MAX_DESCRIPTION),
      parameters: { ...tool.inputSchema, type: 'object' },
      meta: {
        category: readOnly ? 'read' : 'exec',
        defaultApproval: 'require',
        source: this.name,
        lazyGroup: this.config.lazy ? server : undefined,
        readOnlyHint: readOnly || undefined,
        subAgent: true,
      },
      // The server validates against its own schema and answers errors the model can read.
      parse: (args) =>
        args && typeof args === 'object' && !Array.isArray(args)
          ? { ok: true, value: args as Record<string, unknown> }
          : { ok: false, error: 'arguments must be a JSON object' },
      describe: (args: Record<string, unknown>) => ({ short: clip(labelOf(args), 60), long: clip(labelOf(args), 120) }),
      preview: (args: Record<string, unknown>) =>
        `${readOnly ? 'read-only (as the server declares)\n' : ''}${server} → ${tool.name}\n${JSON.stringify(args, null, 2)}`,
      execute: (args: Record<string, unknown>, ctx): Promise<ToolResult> =>
        this.guard(ctx, `tool ${tool.name}`, async () => {
          const result = await this.connection.call(tool.name, args, {
            signal: ctx.signal,
            onProgress: (p, total, message) =>
              ctx.emitOutput(`${message ?? 'progress'} ${total ? `${p}/${total}` : p}\n`),
            scope: { key: ctx.conversationId, owner: ctx },
          });
          return convertResult(result, ctx, server, this.options.maxResultChars);
        }),
    };
  }
}

/** Build a source per enabled server of the configuration. */
export function createMcpSources(servers: Record<string, McpServerConfig>, options: McpSourceOptions): McpToolSource[] {
  return Object.entries(servers)
    .filter(([, cfg]) => cfg.enabled)
    .map(([name, cfg]) => new McpToolSource(name, cfg, { ...options, log: options.log.child({ mcp: name }) }));
}
