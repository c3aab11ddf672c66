/**
 * Deferred tools: the catalog sent with every model request holds the core tools (files, search,
 * shell, web, clarification, memory); the rest wait, named in one line of the system prompt,
 * until the model switches their group on for the conversation (`activate_tools`, or by calling
 * one of them by name). A turn that needs none of them pays none of them; `tools.deferred = false`
 * sends every tool every time, as before.
 */
import type { AnyTool } from '../tools/types.js';

/** Name of the activation tool (`activate-tool.ts`). */
export const ACTIVATE_TOOL = 'activate_tools';

/** A group of built-in tools kept out of the catalog until switched on. */
export interface DeferredGroup {
  name: string;
  /** A few words shown in the system prompt. */
  description: string;
  tools: readonly string[];
}

/** The built-in groups: rarely needed in a turn, together about half of the full catalog. */
export const DEFERRED_GROUPS: readonly DeferredGroup[] = [
  {
    name: 'jobs',
    description: 'scheduled prompts, notifications',
    tools: ['schedule_job', 'list_jobs', 'cancel_job', 'notify'],
  },
  { name: 'agents', description: 'sub-agents', tools: ['task', 'plan'] },
  { name: 'planning', description: 'checklist, scratchpad', tools: ['write_todos', 'update_scratchpad'] },
  { name: 'processes', description: 'background shell commands', tools: ['bash_processes'] },
  { name: 'reference', description: 'exact math, manual pages, clock', tools: ['math', 'man', 'current_time'] },
  { name: 'send', description: 'files and voice into the chat', tools: ['send_attachment', 'send_voice_message'] },
];

/** What the one line lists of a lazy group: its tools (built-ins) or its description (MCP). */
export interface LineGroup {
  name: string;
  description: string;
  /** Tool names, when known up front (built-in groups). */
  tools?: string[];
}

/**
 * The system-prompt line naming every deferred group the conversation could use, switched on or
 * not: the same text on every request of a conversation, so providers' prompt caches keep hitting.
 * Null when there is none.
 */
export function deferredLine(groups: LineGroup[]): string | null {
  if (groups.length === 0) return null;
  const parts = groups.map((g) =>
    g.tools?.length ? `${g.name} (${g.tools.join(', ')})` : `${g.name} (${g.description})`,
  );
  return `More tool groups, switched on for this chat with ${ACTIVATE_TOOL} {"groups":[...]} and usable at once: ${parts.join('; ')}.`;
}

/** Keys of a JSON Schema the zod validation already enforces; the model needs only the shape. */
const VALIDATION_ONLY = new Set([
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'pattern',
  'additionalProperties',
  'maximum',
  'minimum',
  '$schema',
]);

/**
 * A built-in tool's parameters without what only validation needs (length and range limits,
 * patterns, `additionalProperties`): the engine validates every call against the full schema and
 * tells the model what was wrong, so these bytes bought nothing on each request. MCP tools keep
 * their schema as the server gave it.
 */
export function modelSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return strip(schema) as Record<string, unknown>;
}

function strip(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strip);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (VALIDATION_ONLY.has(k)) continue;
    // `properties` maps names to schemas: a parameter called `pattern` or `minimum` stays.
    out[k] =
      k === 'properties' && v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, strip(s)]))
        : strip(v);
  }
  return out;
}

/** True for a tool whose schema is ours to shorten (built-ins, plugins, core tools). */
export function isOwnTool(tool: AnyTool): boolean {
  return !(tool.meta.source ?? 'builtin').startsWith('mcp:');
}
