/**
 * The tool source seam: built-ins, plugins and MCP servers all implement one async interface and
 * feed one registry, so the model sees one catalog and approvals, labels, audit records and `stop`
 * treat every tool alike. A call goes through the tool's own `execute` (for an MCP tool, that is
 * the server round trip).
 */
import type { SourceState, SourceStatus } from '../contract/core.js';
import type { AnyTool, PromptSection } from './types.js';

export type { SourceState, SourceStatus };

/** A provider of tools. */
export interface ToolSource {
  readonly name: string;
  /** Set when the source's tools stay hidden until `activate_tools` grants this group. */
  readonly lazy?: { name: string; description: string };
  /**
   * Connect (or prepare). Resolves once the first attempt ended, successfully or not — a failing
   * source keeps retrying in the background and never rejects here.
   */
  connect(): Promise<void>;
  /** The tools as of now. */
  listTools(): Promise<AnyTool[]>;
  /** Register a listener called when the tool list changed (e.g. `notifications/tools/list_changed`). */
  onToolsChanged?(listener: () => void): void;
  status(): SourceStatus;
  close(): Promise<void>;
  /** A part of the system prompt the source contributes (an MCP server's instructions). */
  readonly promptSection?: PromptSection;
}

/** A fixed list of tools: the built-ins, a plugin. */
export class StaticToolSource implements ToolSource {
  constructor(
    readonly name: string,
    private readonly tools: AnyTool[],
  ) {}

  async connect(): Promise<void> {}

  async listTools(): Promise<AnyTool[]> {
    return this.tools;
  }

  status(): SourceStatus {
    return { name: this.name, state: 'ready', kind: 'static', tools: this.tools.map((t) => t.name) };
  }

  async close(): Promise<void> {}
}

/** One line per source for `/mcp`, `switchboard mcp list` and `/healthz`. */
export function formatSourceStatus(s: SourceStatus, options: { withTools?: boolean; now?: number } = {}): string {
  const now = options.now ?? Date.now();
  const retry = s.retryAt !== undefined ? `, retry in ${Math.max(0, Math.round((s.retryAt - now) / 1000))} s` : '';
  const error = s.error ? ` — ${s.error}` : '';
  const lazy = s.lazyGroup ? ' (lazy)' : '';
  let line = `${s.name} [${s.kind}] ${s.state}${lazy}: ${s.tools.length} tools${retry}${error}`;
  if (options.withTools && s.tools.length) line += `\n  ${s.tools.join(', ')}`;
  for (const r of s.refused ?? []) line += `\n  refused ${r}`;
  return line;
}

/** The `/mcp` chat answer: every MCP server with its state and tools. */
export function mcpStatusText(statuses: SourceStatus[]): string {
  const mcp = statuses.filter((s) => s.name.startsWith('mcp:'));
  if (mcp.length === 0) return 'No MCP servers are configured.';
  return mcp.map((s) => formatSourceStatus(s, { withTools: true })).join('\n');
}
