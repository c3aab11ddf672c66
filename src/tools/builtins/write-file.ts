/**
 * `write_file {path, content}`: create or overwrite a file. Parents are created; the write is
 * atomic and keeps the file mode; audited as `file_write`.
 */
import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { defineTool } from '../define.js';
import { withPathLocks } from '../path-lock.js';
import { sha256, sha256File } from '../file-io.js';
import { fail, formatBytes, fsError, resolvePath } from './common.js';
import { MAX_EDIT_BYTES } from './edit-file.js';
import { commitWrite } from './file-write.js';

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
    const r = resolvePath(ctx, args.path, 'write');
    if (!r.ok) return r.result;
    const { abs } = r.path;
    return withPathLocks([abs], async () => {
      const shown = ctx.paths.display(abs);
      let before: Buffer | null = null;
      let existed = false;
      let beforeHash: string | undefined;
      try {
        const st = await fs.stat(abs);
        if (st.isDirectory()) return fail(`${shown}: is a directory`);
        if (!st.isFile()) return fail(`${shown}: not a regular file`);
        existed = true;
        // Huge files are hashed as a stream instead of being held in memory.
        if (st.size > MAX_EDIT_BYTES) beforeHash = await sha256File(abs);
        else before = await fs.readFile(abs);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return fsError(shown, err);
      }
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
        return fsError(shown, err);
      }
    });
  },
});
