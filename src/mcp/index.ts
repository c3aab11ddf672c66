/**
 * Entry points of the MCP client for the rest of switchboard: the configured servers as tool
 * sources, and a one-off probe (connect, list, close) for `switchboard mcp list` and `doctor`.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { ToolRegistry } from '../core/tool-registry.js';
import type { SourceStatus } from '../tools/source.js';
import { toRoot } from './connection.js';
import { SwitchboardHost } from './host.js';
import { createMcpSources, type McpToolSource } from './source.js';

/** Version announced to servers in `initialize`. */
export const CLIENT_VERSION = '0.1.0';

/** A tool source per enabled server. */
export function mcpSourcesFor(config: Config, log: Logger): McpToolSource[] {
  return createMcpSources(config.mcp.servers, {
    connectTimeoutMs: config.mcp.connect_timeout_seconds * 1000,
    maxRetryMs: config.mcp.max_retry_seconds * 1000,
    maxResultChars: config.mcp.max_result_chars,
    log,
    version: CLIENT_VERSION,
    defaultRoots: [toRoot(config.workspace.root)],
    host: new SwitchboardHost({
      servers: config.mcp.servers,
      askTimeoutMs: config.mcp.ask_timeout_seconds * 1000,
      maxSamplingTokens: config.mcp.sampling_max_tokens,
      log,
    }),
  });
}

/**
 * Connect to every enabled server once (concurrently, each within the connect timeout), collect
 * each one's state and tools as the model would see them, and disconnect.
 */
export async function probeServers(config: Config, log: Logger): Promise<SourceStatus[]> {
  const sources = mcpSourcesFor(config, log);
  const registry = new ToolRegistry(log);
  for (const s of sources) registry.addSource(s);
  try {
    await registry.connectAll();
    const disabled = Object.entries(config.mcp.servers)
      .filter(([, s]) => !s.enabled)
      .map(
        ([name, s]): SourceStatus => ({
          name: `mcp:${name}`,
          state: 'disabled',
          kind: s.command ? 'stdio' : 'http',
          tools: [],
        }),
      );
    // A failed first attempt schedules a retry; a probe reports the failure instead.
    return [...registry.statuses().map((s) => ({ ...s, retryAt: undefined })), ...disabled];
  } finally {
    await registry.closeAll();
  }
}
