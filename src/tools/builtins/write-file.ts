/**
 * `write_file {path, content}`: create or overwrite a file. Parents are created; the write is
 * atomic and keeps the file mode; audited as `file_write`.
 */
import { z } from 'zod';
import { defineTool } from '../define.js';
import { withPathLocks } from '../path-lock.js';
import { locate } from '../confined/open.js';
import { sha256 } from '../file-io.js';
import { confinedFailure, fail, formatBytes, shownPath } from './common.js';
import { commitWrite, type Current, readCurrent } from './file-write.js';

/** Largest content accepted, in characters. */
export const MAX_WRITE_CHARS = 10_000_000;

const schema = z
  .object({
    path: z.string().min(1),
    content: z.string().max(MAX_WRITE_CHARS),
  })
  .strict();

/** The `write_file` tool. */
export const writeFileTool = defineTool({
  name: 'write_file',
  description: 'Create or overwrite a file (folders created). For part of a file use edit_file.',
  schema,
  meta: { category: 'write', defaultApproval: 'require', primaryKey: 'content', subAgent: true, source: 'builtin' },
  describe: (a) => `write_file ${a.path}`,
  targetPath: (a) => a.path,
  // The whole content: the card shows what fits and sends the rest as a file.
  preview: (a) => `${a.path} (${formatBytes(Buffer.byteLength(a.content))})\n${a.content}`,
  async execute(args, ctx) {
    let abs: string;
    try {
      abs = await locate(ctx.paths, args.path, 'write');
    } catch (err) {
      return confinedFailure(shownPath(ctx, args.path, 'write'), err);
    }
    return withPathLocks([abs], async () => {
      const shown = ctx.paths.display(abs);
      let now: Current;
      try {
        now = await readCurrent(ctx, abs);
      } catch (err) {
        return confinedFailure(shown, err);
      }
      if (now.exists && now.kind === 'dir') return fail(`${shown}: is a directory`);
      if (now.exists && now.kind !== 'file') return fail(`${shown}: not a regular file`);
      const existed = now.exists;
      // Huge files are only hashed, not held in memory.
      const before = now.exists ? now.data : null;
      const beforeHash = now.exists && now.data === null ? now.hash : undefined;
      if (before && sha256(before) === sha256(args.content)) {
        return { output: `${shown}: unchanged (same content)`, summary: `${shown}: unchanged` };
      }
      try {
        const hash = await commitWrite(ctx, {
          abs,
          operation: existed ? 'replace' : 'create',
          before,
          existed,
          beforeHash,
          after: args.content,
        });
        const bytes = Buffer.byteLength(args.content);
        const verb = existed ? 'Replaced' : 'Created';
        return {
          output: `${verb} ${shown} (${formatBytes(bytes)}, sha256 ${hash})`,
          summary: `${verb.toLowerCase()} ${shown}`,
        };
      } catch (err) {
        return confinedFailure(shown, err);
      }
    });
  },
});
