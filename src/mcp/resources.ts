/**
 * A server's resources as two tools in its group of the catalog: `list_resources` (resources and
 * resource templates, every page) and `read_resource {uri}`. Text reaches the model; images and
 * other binary contents go the way tool images go (saved under the workspace, shown in the chat).
 * They sit in the server's lazy group, so a lazy server's resources stay hidden until activated.
 */
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { clip } from '../tools/define.js';
import type { AnyTool, ToolContext, ToolResult } from '../tools/types.js';
import type { McpConnection } from './connection.js';
import { mcpToolName } from './naming.js';

/** Safety cap on list pages (a server whose cursor never ends). */
const MAX_PAGES = 20;
/** Longest listing given to the model. */
const MAX_LIST_CHARS = 20_000;

/** What the resource tools need from their source. */
export interface ResourceToolsDeps {
  server: string;
  connection: McpConnection;
  lazyGroup: string | undefined;
  source: string;
  /** Run a server round trip the way tool calls run (errors become model-readable text). */
  run(ctx: ToolContext, work: () => Promise<ToolResult>): Promise<ToolResult>;
  convert(result: CallToolResult, ctx: ToolContext): Promise<ToolResult>;
}

/** The two resource tools of a server that advertises resources. */
export function resourceTools(d: ResourceToolsDeps): AnyTool[] {
  const meta = {
    category: 'read' as const,
    defaultApproval: 'require' as const,
    source: d.source,
    lazyGroup: d.lazyGroup,
    readOnlyHint: true,
    subAgent: true,
  };
  const list: AnyTool = {
    name: mcpToolName(d.server, 'list_resources'),
    description: `List the resources and resource templates of the MCP server ${d.server} (URIs to read with ${mcpToolName(d.server, 'read_resource')}).`,
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    meta,
    parse: () => ({ ok: true, value: {} }),
    describe: () => ({ short: `${d.server} resources`, long: `list the resources of ${d.server}` }),
    preview: () => `${d.server} → list resources and templates`,
    execute: (_args, ctx) =>
      d.run(ctx, async () => {
        const text = await listing(d.connection, ctx.signal);
        return {
          output:
            text.length > MAX_LIST_CHARS
              ? `${text.slice(0, MAX_LIST_CHARS)}\n[listing cut at ${MAX_LIST_CHARS} characters]`
              : text,
        };
      }),
  };
  const read: AnyTool = {
    name: mcpToolName(d.server, 'read_resource'),
    description: `Read one resource of the MCP server ${d.server} by its URI (a listed URI, or a template with its variables filled in).`,
    parameters: {
      type: 'object',
      properties: { uri: { type: 'string', description: 'The resource URI' } },
      required: ['uri'],
      additionalProperties: false,
    },
    meta,
    parse: (args) => {
      const uri = (args as { uri?: unknown } | null)?.uri;
      return typeof uri === 'string' && uri.length > 0
        ? { ok: true, value: { uri } }
        : { ok: false, error: 'uri must be a non-empty string' };
    },
    describe: (a: { uri: string }) => ({
      short: clip(`${d.server} read ${a.uri}`, 60),
      long: clip(`${d.server} read ${a.uri}`, 120),
    }),
    preview: (a: { uri: string }) => `read-only (a resource read)\n${d.server} → ${a.uri}`,
    execute: (a: { uri: string }, ctx) =>
      d.run(ctx, async () => {
        const result = await d.connection.use((client) =>
          client.readResource(
            { uri: a.uri },
            { signal: ctx.signal, timeout: d.connection.config.timeout_seconds * 1000 },
          ),
        );
        return d.convert(asToolResult(result), ctx);
      }),
  } as AnyTool;
  return [list, read];
}

/** Every resource and template, one per line. */
async function listing(connection: McpConnection, signal: AbortSignal): Promise<string> {
  const timeout = connection.config.timeout_seconds * 1000;
  const lines: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const r = await connection.use((c) => c.listResources(cursor ? { cursor } : undefined, { signal, timeout }));
    for (const res of r.resources) {
      lines.push(
        `- ${res.uri}${res.name ? ` — ${res.name}` : ''}${res.mimeType ? ` (${res.mimeType})` : ''}${res.description ? `: ${oneLine(res.description)}` : ''}`,
      );
    }
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  const templates: string[] = [];
  cursor = undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const r = await connection.use((c) =>
      c.listResourceTemplates(cursor ? { cursor } : undefined, { signal, timeout }),
    );
    for (const t of r.resourceTemplates) {
      templates.push(
        `- ${t.uriTemplate}${t.name ? ` — ${t.name}` : ''}${t.description ? `: ${oneLine(t.description)}` : ''}`,
      );
    }
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  const out = [`Resources (${lines.length}):`, ...(lines.length ? lines : ['(none)'])];
  if (templates.length)
    out.push('', `Templates (${templates.length}; fill in the {variables} and read the URI):`, ...templates);
  return out.join('\n');
}

const oneLine = (s: string) => clip(s.replace(/\s+/g, ' ').trim(), 200);

/** A resource read as tool content: text as text, images as images, other blobs as embedded resources. */
function asToolResult(result: ReadResourceResult): CallToolResult {
  const content: CallToolResult['content'] = [];
  for (const c of result.contents) {
    if ('text' in c && typeof c.text === 'string')
      content.push({ type: 'text', text: `[resource ${c.uri}]\n${c.text}` });
    else if ('blob' in c && typeof c.blob === 'string') {
      if (c.mimeType?.startsWith('image/')) content.push({ type: 'image', data: c.blob, mimeType: c.mimeType });
      else content.push({ type: 'resource', resource: { uri: c.uri, blob: c.blob, mimeType: c.mimeType } });
    }
  }
  return { content };
}
