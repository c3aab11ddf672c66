/**
 * Turn an MCP `CallToolResult` into what the model and the chat see: text parts joined; images,
 * audio and binary resources saved under the workspace (`mcp-output/<server>/`) and offered to the
 * chat as attachments; `isError` becomes a failed tool result; text over the cap is cut with a
 * notice. Content annotated `audience: ["user"]` is shown in the chat and kept from the model;
 * `["assistant"]` goes to the model and is not shown.
 */
import { writeAtomic } from '../tools/confined/write.js';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../errors.js';
import type { ToolContext, ToolResult } from '../tools/types.js';

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/ogg': 'ogg',
  'application/pdf': 'pdf',
  'application/json': 'json',
  'text/plain': 'txt',
};

/** Folder (workspace-relative) where a server's binary results land. */
export function outputFolder(server: string): string {
  return path.join('mcp-output', server);
}

/** Convert a result; `maxChars` caps the text given to the model. */
export async function convertResult(
  result: CallToolResult,
  ctx: ToolContext,
  server: string,
  maxChars: number,
): Promise<ToolResult> {
  const parts: string[] = [];
  const forUser: string[] = [];
  let index = 0;
  const save = async (base64: string, mimeType: string, kind: 'photo' | 'file', show = true): Promise<string> => {
    index++;
    const ext = EXTENSIONS[mimeType] ?? 'bin';
    const rel = path.join(outputFolder(server), `${ctx.callId}-${index}.${ext}`);
    let abs: string;
    try {
      // Through the confined primitive: a symlink planted at mcp-output/ cannot redirect it.
      ({ abs } = await writeAtomic(ctx.paths, rel, Buffer.from(base64, 'base64')));
    } catch (err) {
      return `[${mimeType} result not saved: ${errorMessage(err)}]`;
    }
    await ctx.audit('file_write', { path: ctx.paths.display(abs), source: `mcp:${server}` });
    if (!show) return `[${mimeType} saved to ${rel}]`;
    if (!ctx.sendFile) return `[${mimeType} saved to ${rel}; this chat cannot show files]`;
    try {
      await ctx.sendFile({
        path: abs,
        kind: kind === 'photo' && mimeType !== 'image/svg+xml' ? 'photo' : 'file',
      });
      return `[${mimeType} saved to ${rel} and shown in the chat]`;
    } catch (err) {
      return `[${mimeType} saved to ${rel}; sending it to the chat failed: ${errorMessage(err)}]`;
    }
  };

  for (const item of result.content ?? []) {
    const audience = audienceOf(item);
    switch (item.type) {
      case 'text':
        if (audience.model) parts.push(item.text);
        else forUser.push(item.text);
        break;
      case 'image':
      case 'audio': {
        const note = await save(item.data, item.mimeType, item.type === 'image' ? 'photo' : 'file', audience.user);
        if (audience.model) parts.push(note);
        break;
      }
      case 'resource': {
        const r = item.resource;
        if ('text' in r && typeof r.text === 'string') parts.push(`[resource ${r.uri}]\n${r.text}`);
        else if ('blob' in r && typeof r.blob === 'string')
          parts.push(`[resource ${r.uri}] ${await save(r.blob, r.mimeType ?? 'application/octet-stream', 'file')}`);
        break;
      }
      case 'resource_link':
        parts.push(`[resource link ${item.uri}${item.name ? ` (${item.name})` : ''}]`);
        break;
      default:
        parts.push(`[unsupported content: ${(item as { type: string }).type}]`);
    }
  }
  // Text meant for the user alone is shown as the call's output, never given to the model.
  if (forUser.length) ctx.emitOutput(`${forUser.join('\n')}\n`);
  if (parts.length === 0 && forUser.length) parts.push('(the result was shown to the user)');
  if (parts.length === 0 && result.structuredContent) parts.push(JSON.stringify(result.structuredContent, null, 2));
  let output = parts.join('\n');
  if (output.length > maxChars) {
    output = `${output.slice(0, maxChars)}\n[result truncated: ${maxChars} of ${output.length} characters shown]`;
  }
  const summary = forUser.length ? forUser.join(' ').slice(0, 100) : undefined;
  if (result.isError)
    return { output: `Error from MCP server "${server}": ${output || '(no details)'}`, status: 'failed' };
  return { output: output || '(empty result)', ...(summary ? { summary } : {}) };
}

/** Who a content item is for: no audience annotation means both. */
function audienceOf(item: { annotations?: { audience?: string[] } }): { user: boolean; model: boolean } {
  const audience = item.annotations?.audience;
  if (!audience || audience.length === 0) return { user: true, model: true };
  return { user: audience.includes('user'), model: audience.includes('assistant') };
}
