/**
 * `edit_file {path, old_string, new_string, replace_all?, near_line?, expected_before_hash?}`:
 * replace exact text in a file this conversation has read. Exactly one match unless
 * `replace_all` or `near_line` picks; a file changed since the read, or not matching
 * `expected_before_hash`, is refused. Atomic; audited as `file_write`.
 */
import { z } from 'zod';
import { defineTool } from '../define.js';
import { withPathLocks } from '../path-lock.js';
import { applyEdit, diffPreview, editScope } from '../edit-core.js';
import { lastRead } from '../../store/repos/file-reads.js';
import { locate } from '../confined/open.js';
import { staleReason } from '../file-reads.js';
import { looksBinary } from '../file-io.js';
import { confinedFailure, fail, numberLines, shownPath } from './common.js';
import { commitWrite, type Current, readCurrent } from './file-write.js';

const schema = z
  .object({
    path: z.string().min(1),
    old_string: z.string().min(1),
    new_string: z.string(),
    replace_all: z.boolean().optional(),
    near_line: z.number().int().min(1).optional().describe('pick the match nearest this line'),
    expected_before_hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/i, 'must be a hex sha256')
      .optional()
      .describe('sha256 shown by read_file; refused if the file changed'),
  })
  .strict();

/** The `edit_file` tool. */
export const editFileTool = defineTool({
  name: 'edit_file',
  description: 'Replace exact text in a file read before. old_string must match once, unless replace_all or near_line.',
  schema,
  meta: { category: 'write', defaultApproval: 'require', primaryKey: 'old_string', subAgent: true, source: 'builtin' },
  describe: (a) => `edit_file ${a.path}`,
  targetPath: (a) => a.path,
  preview: (a) => `${a.path}${editScope(a)}\n${diffPreview(a.old_string, a.new_string)}`,
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
      if (!now.exists) return fail(`${shown}: no such file or directory`);
      if (now.kind === 'dir') return fail(`${shown}: is a directory`);
      if (now.kind !== 'file') return fail(`${shown}: not a regular file`);
      const st = now.stat;
      if (now.data === null) return fail(`${shown}: too large to edit in place (${st.size} bytes)`);
      const data = now.data;
      if (looksBinary(data.subarray(0, 8192))) return fail(`${shown}: binary file; not edited`);
      const current = now.hash;
      if (args.expected_before_hash && args.expected_before_hash.toLowerCase() !== current) {
        return fail(
          `${shown}: stale: expected sha256 ${args.expected_before_hash} but the file is ${current}; read it again`,
        );
      }
      const stale = staleReason(shown, await lastRead(ctx.db, ctx.conversationId, abs), {
        size: st.size,
        mtimeMs: st.mtimeMs,
        sha256: current,
      });
      if (stale) return fail(stale);
      const text = data.toString('utf8');
      const edit = applyEdit(text, args);
      if (!edit.ok) return fail(`${shown}: ${edit.error}`);
      try {
        const hash = await commitWrite(
          ctx,
          { abs, operation: 'edit', before: data, after: edit.content },
          { replaced: edit.replaced },
        );
        const first = edit.lines[0] as number;
        const snippetStart = Math.max(1, first - 2);
        const newLines = edit.content.split('\n');
        const span = args.new_string.split('\n').length;
        const snippet = numberLines(newLines.slice(snippetStart - 1, first + span + 1), snippetStart);
        const where = edit.replaced === 1 ? `line ${first}` : `lines ${edit.lines.join(', ')}`;
        return {
          output: `Edited ${shown}: replaced ${edit.replaced} occurrence${edit.replaced === 1 ? '' : 's'} at ${where} (sha256 ${hash})\n${snippet}`,
          summary: `edited ${shown} (${edit.replaced}×)`,
        };
      } catch (err) {
        return confinedFailure(shown, err);
      }
    });
  },
});
