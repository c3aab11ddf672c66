/**
 * Turn an MCP `CallToolResult` into what the model and the chat see: text parts joined; images,
 * audio and binary resources saved under the workspace (`mcp-output/<server>/`) and offered to the
 * chat as attachments; `isError` becomes a failed tool result; text over the cap is cut with a
 * notice.
 */
import { promises as fs } from 'node:fs';
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
export async function convertResult(result: CallToolResult, ctx: ToolContext, server: string, maxChars: number): Promise<ToolResult> {
  const parts: string[] = [];
  let index = 0;
  const save = async (base64: string, mimeType: string, kind: 'photo' | 'file'): Promise<string> => {
    index++;
    const ext = EXTENSIONS[mimeType] ?? 'bin';
    const rel = path.join(outputFolder(server), `${ctx.callId}-${index}.${ext}`);
    const resolved = ctx.paths.resolve(rel, 'write');
    if (!resolved.ok) return `[${mimeType} result not saved: ${resolved.reason}]`;
    try {
      await fs.mkdir(path.dirname(resolved.abs), { recursive: true });
      await fs.writeFile(resolved.abs, Buffer.from(base64, 'base64'));
    } catch (err) {
      return `[${mimeType} result not saved: ${errorMessage(err)}]`;
    }
    await ctx.audit('file_write', { path: resolved.rel, source: `mcp:${server}` });
    if (!ctx.sendFile) return `[${mimeType} saved to ${rel}; this chat cannot show files]`;
    try {
      await ctx.sendFile({ path: resolved.abs, kind: kind === 'photo' && mimeType !== 'image/svg+xml' ? 'photo' : 'file' });
      return `[${mimeType} saved to ${rel} and shown in the chat]`;
    } catch (err) {
      return `[${mimeType} saved to ${rel}; sending it to the chat failed: ${errorMessage(err)}]`;
    }
  };

  for (const item of result.content ?? []) {
    switch (item.type) {
      case 'text':
        parts.push(item.text);
        break;
      case 'image':
        parts.push(await save(item.data, item.mimeType, 'photo'));
        break;
      case 'audio':
        parts.push(await save(item.data, item.mimeType, 'file'));
        break;
      case 'resource': {
        const r = item.resource;
        if ('text' in r && typeof r.text === 'string') parts.push(`[resource ${r.uri}]\n${r.text}`);
        else if ('blob' in r && typeof r.blob === 'string') parts.push(`[resource ${r.uri}] ${await save(r.blob, r.mimeType ?? 'application/octet-stream', 'file')}`);
        break;
      }
      case 'resource_link':
        parts.push(`[resource link ${item.uri}${item.name ? ` (${item.name})` : ''}]`);
        break;
      default:
        parts.push(`[unsupported content: ${(item as { type: string }).type}]`);
    }
  }
  if (parts.length === 0 && result.structuredContent) parts.push(JSON.stringify(result.structuredContent, null, 2));
  let output = parts.join('\n');
  if (output.length > maxChars) {
    output = `${output.slice(0, maxChars)}\n[result truncated: ${maxChars} of ${output.length} characters shown]`;
  }
  if (result.isError) return { output: `Error from MCP server "${server}": ${output || '(no details)'}`, status: 'failed' };
  return { output: output || '(empty result)' };
}
