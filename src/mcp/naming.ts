/**
 * Model-facing names of MCP tools: `mcp__<server>__<tool>`, characters outside `[A-Za-z0-9_-]`
 * replaced by `_`, at most 64 characters (a long name keeps a short hash of the original so two
 * long names stay distinct).
 */
import { createHash } from 'node:crypto';

/** Providers reject tool names over 64 characters. */
export const MAX_TOOL_NAME = 64;

/** The model-facing name of `tool` on `server` (the server name is validated by config). */
export function mcpToolName(server: string, tool: string): string {
  const prefix = `mcp__${server}__`;
  const clean = tool.replace(/[^A-Za-z0-9_-]/g, '_') || '_';
  if (prefix.length + clean.length <= MAX_TOOL_NAME) return prefix + clean;
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, 6);
  return `${prefix}${clean.slice(0, MAX_TOOL_NAME - prefix.length - 7)}_${hash}`;
}
