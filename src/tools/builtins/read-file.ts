/**
 * `read_file {path, offset?, limit?}`: numbered lines (1-based). Files up to 8 MB are read whole
 * and hashed; larger files are read by line range without loading them. Binary files are
 * reported, not dumped. The output is capped at `tools.read_max_bytes` with a notice saying how
 * to continue. Records the read so `edit_file` may follow.
 */
import { z } from 'zod';
import { defineTool } from '../define.js';
import { recordRead } from '../../store/repos/file-reads.js';
import { type OpenedEntry, openEntry } from '../confined/open.js';
import { describeBinary, looksBinary, readHead, sha256, SNIFF_BYTES } from '../file-io.js';
import { type LineRange, rangeOfText, readLineRange } from '../line-reader.js';
import type { ToolContext, ToolResult } from '../types.js';
import { confinedFailure, fail, formatBytes, fsError, numberLines, shownPath } from './common.js';

/** Files up to this size are read whole and hashed (the hash guards later edits). */
export const WHOLE_READ_LIMIT = 8 * 1024 * 1024;
/** Lines returned when `limit` is not given. */
export const DEFAULT_LINE_LIMIT = 2000;
/** Longer lines are cut. */
export const MAX_LINE_BYTES = 2000;

const schema = z
  .object({
    path: z.string().min(1),
    offset: z.number().int().min(1).optional().describe('first line, 1-based'),
    limit: z.number().int().min(1).max(100_000).optional().describe(`default ${DEFAULT_LINE_LIMIT}`),
  })
  .strict();

/** The `read_file` tool. */
export const readFileTool = defineTool({
  name: 'read_file',
  description: 'Read a text file as numbered lines; offset/limit for a range. Read before edit_file.',
  schema,
  meta: { category: 'read', defaultApproval: 'allow', primaryKey: 'path', subAgent: true, source: 'builtin' },
  describe: (a) => `read_file ${a.path}${a.offset ? `:${a.offset}` : ''}`,
  targetPath: (a) => a.path,
  async execute(args, ctx) {
    let opened: OpenedEntry;
    try {
      opened = await openEntry(ctx.paths, args.path, 'read');
    } catch (err) {
      return confinedFailure(shownPath(ctx, args.path), err);
    }
    try {
      return await readOpened(opened, args, ctx);
    } finally {
      await opened.handle.close();
    }
  },
});

/** Read the lines asked for from the opened file (by its descriptor; nothing is opened again). */
async function readOpened(
  opened: OpenedEntry,
  args: { offset?: number; limit?: number },
  ctx: ToolContext,
): Promise<ToolResult> {
  const { abs, handle, stat: st } = opened;
  const shown = ctx.paths.display(abs);
  if (st.isDirectory()) return fail(`${shown}: is a directory; use list_files to see its contents`);
  if (!st.isFile()) return fail(`${shown}: not a regular file`);

  const offset = args.offset ?? 1;
  const opts = {
    offset,
    limit: args.limit ?? DEFAULT_LINE_LIMIT,
    maxBytes: ctx.config.tools.read_max_bytes,
    maxLineBytes: MAX_LINE_BYTES,
  };
  let range: LineRange;
  let hash: string | null = null;
  try {
    if (st.size <= WHOLE_READ_LIMIT) {
      const data = await handle.readFile();
      const head = data.subarray(0, SNIFF_BYTES);
      if (looksBinary(head)) return binary(shown, st.size, head);
      hash = sha256(data);
      range = rangeOfText(data.toString('utf8'), opts);
    } else {
      const head = await readHead(handle);
      if (looksBinary(head)) return binary(shown, st.size, head);
      range = await readLineRange(handle, abs, opts);
    }
  } catch (err) {
    return fsError(shown, err);
  }
  await recordRead(ctx.db, ctx.conversationId, abs, st, hash);

  const last = range.first + range.lines.length - 1;
  if (range.lines.length === 0) {
    if (range.total === 0) return { output: `${shown}: empty file (0 lines)`, summary: `${shown}: empty` };
    return fail(`${shown}: offset ${offset} is past the end of the file (${range.total ?? '?'} lines)`);
  }
  const of = range.total !== undefined ? ` of ${range.total}` : '';
  const hashNote = hash ? `, sha256 ${hash}` : '';
  const header = `${shown} (lines ${range.first}-${last}${of}, ${formatBytes(st.size)}${hashNote})`;
  let notice = '';
  const more = range.total === undefined || last < range.total;
  if (range.byteCapped) {
    notice = `\n[output capped at ${formatBytes(opts.maxBytes)}; continue with offset=${last + 1}]`;
  } else if (more) {
    notice = `\n[more lines follow; continue with offset=${last + 1}]`;
  }
  return {
    output: `${header}\n${numberLines(range.lines, range.first)}${notice}`,
    summary: `${shown}: lines ${range.first}-${last}${of}`,
  };
}

function binary(shown: string, size: number, head: Buffer) {
  return fail(`${shown}: binary file (${describeBinary(head)}, ${formatBytes(size)}); not shown`);
}
