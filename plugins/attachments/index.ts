/**
 * `send_attachment`: put a workspace file into the current chat. Channel-neutral: the file is
 * opened through the confined primitive (the workspace policy, no symlink swapped in followed),
 * general size caps apply here, and `sendFile` takes the copy that is sent, so a change to the
 * workspace afterwards changes nothing sent; the channel applies its platform limits
 * (Telegram: photos ≤ 10 MB, captions ≤ 1024 characters).
 * Offered only on channels with the `attachments` capability.
 */
import path from 'node:path';
import { z } from 'zod';
import { errorMessage } from '../../src/errors.js';
import { openEntry } from '../../src/tools/confined/open.js';
import { formatBytes } from '../../src/tools/builtins/common.js';
import { defineTool } from '../../src/tools/define.js';
import type { Plugin } from '../../src/tools/plugin.js';

/** Largest file sent (bytes): 50 MB, the Telegram Bot API upload cap and well under Slack's. */
export const ATTACHMENT_MAX_BYTES = 50 * 1024 * 1024;
/** Largest image sent as a photo (bytes); bigger images go as documents. */
export const PHOTO_MAX_BYTES = 10 * 1024 * 1024;
/** Longest caption (characters); longer ones are trimmed. */
export const CAPTION_MAX_CHARS = 1024;

const IMAGE_EXTENSIONS = new Set(['.jpg', '.jpeg', '.png', '.gif', '.webp']);

const sendAttachment = defineTool({
  name: 'send_attachment',
  description:
    'Send a file from the workspace into this chat (images as photos unless as_document is true). Use it when the user asks for a file.',
  schema: z.object({
    path: z.string().min(1).describe('Workspace-relative path of the file to send'),
    caption: z.string().optional().describe('Short caption shown with the file (trimmed to 1024 characters)'),
    as_document: z.boolean().optional().describe('Send images as documents (uncompressed); default false'),
  }),
  meta: {
    category: 'channel',
    defaultApproval: 'allow',
    primaryKey: 'path',
    requires: ['attachments'],
    source: 'plugin:attachments',
  },
  describe: (a) => `send_attachment ${a.path}`,
  targetPath: (a) => a.path,
  async execute(args, ctx) {
    if (!ctx.sendFile) return { output: 'This chat cannot receive files.', status: 'failed' };
    let size: number;
    let abs: string;
    try {
      const opened = await openEntry(ctx.paths, args.path, 'read');
      await opened.handle.close();
      if (!opened.stat.isFile()) return { output: `Cannot send ${args.path}: not a regular file`, status: 'failed' };
      size = opened.stat.size;
      abs = opened.abs;
    } catch (err) {
      return { output: `Cannot send ${args.path}: ${errorMessage(err)}`, status: 'failed' };
    }
    if (size === 0) return { output: `Cannot send ${args.path}: the file is empty`, status: 'failed' };
    if (size > ATTACHMENT_MAX_BYTES) {
      return {
        output: `Cannot send ${args.path}: ${(size / 1048576).toFixed(1)} MB is over the 50 MB limit`,
        status: 'failed',
      };
    }
    const isImage = IMAGE_EXTENSIONS.has(path.extname(abs).toLowerCase());
    const kind = isImage && !args.as_document && size <= PHOTO_MAX_BYTES ? 'photo' : 'file';
    const caption = args.caption?.trim() ? args.caption.trim().slice(0, CAPTION_MAX_CHARS) : undefined;
    try {
      await ctx.sendFile({ path: abs, caption, kind });
    } catch (err) {
      return { output: `Sending ${args.path} failed: ${errorMessage(err)}`, status: 'failed' };
    }
    const rel = ctx.paths.display(abs);
    return {
      output: `Sent ${rel} (${formatBytes(size)}) as ${kind === 'photo' ? 'a photo' : 'a document'}.`,
      summary: `sent ${rel}`,
    };
  },
});

/** The attachments plugin. */
export const attachmentsPlugin: Plugin = { name: 'attachments', tools: () => [sendAttachment] };
