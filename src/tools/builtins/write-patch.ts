/**
 * `write_patch {patches:[{op: create|replace|edit, path, ...}]}`: several file changes as one
 * batch. The whole batch is validated in memory first (paths, existence, reads, matches, hashes);
 * only then are files written, and a write failure puts back what was already written. Edits to
 * one file apply in order, each to the result of the previous. `create` never clobbers.
 */
import type { Stats } from 'node:fs';
import { z } from 'zod';
import { defineTool } from '../define.js';
import { withPathLocks } from '../path-lock.js';
import type { ToolContext, ToolResult } from '../types.js';
import { applyEdit, diffPreview, editScope } from '../edit-core.js';
import { lastRead } from '../../store/repos/file-reads.js';
import { staleReason } from '../file-reads.js';
import { locate, PathRefused } from '../confined/open.js';
import { looksBinary, sha256 } from '../file-io.js';
import { fail, formatBytes } from './common.js';
import { commitWrite, type PlannedWrite, readCurrent, rollback } from './file-write.js';

// One flat object per patch (as the contract writes it) rather than a oneOf union: flat schemas
// work with every OpenAI-compatible server. Which fields each op needs is checked below.
const patch = z
  .object({
    op: z.enum(['create', 'replace', 'edit']),
    path: z.string().min(1),
    content: z.string().optional(),
    old_string: z.string().min(1).optional(),
    new_string: z.string().optional(),
    replace_all: z.boolean().optional(),
    near_line: z.number().int().min(1).optional(),
    expected_before_hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/i, 'must be a hex sha256')
      .optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    const need = (field: keyof typeof p) => {
      if (p[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `required for op "${p.op}"` });
    };
    const forbid = (field: keyof typeof p) => {
      if (p[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: `not used by op "${p.op}"` });
    };
    if (p.op === 'edit') {
      need('old_string');
      need('new_string');
      forbid('content');
    } else {
      need('content');
      for (const f of ['old_string', 'new_string', 'replace_all', 'near_line'] as const) forbid(f);
      if (p.op === 'create') forbid('expected_before_hash');
    }
  });

const schema = z
  .object({
    patches: z.array(patch).min(1).max(50),
  })
  .strict();

type Patch = z.infer<typeof patch>;

interface FileState {
  abs: string;
  shown: string;
  before: Buffer | null;
  /** Facts of the file before the batch (for the staleness check of edits). */
  stat: Stats | null;
  current: string | null;
  ops: string[];
  readChecked: boolean;
}

/** The `write_patch` tool. */
export const writePatchTool = defineTool({
  name: 'write_patch',
  description:
    'Several file changes, all or nothing: create (new file; content), replace (whole file; content) or ' +
    'edit (old_string → new_string as in edit_file).',
  schema,
  meta: { category: 'write', defaultApproval: 'require', subAgent: true, source: 'builtin' },
  describe: (a) => {
    const paths = [...new Set(a.patches.map((p) => p.path))];
    return `write_patch ${paths.length === 1 ? paths[0] : `${paths.length} files`}`;
  },
  targetPath: (a) => {
    const paths = new Set(a.patches.map((p) => p.path));
    return paths.size === 1 ? a.patches[0]?.path : undefined;
  },
  preview: (a) => a.patches.map(previewPatch).join('\n\n'),
  async execute(args, ctx) {
    // Where each patch lands, following symlinks by the confined rules; a refusal is reported
    // by the batch, in order, before anything is written.
    const targets = await Promise.all(
      args.patches.map((p) => locate(ctx.paths, p.path, 'write').catch((err: unknown) => err as Error)),
    );
    const located = targets.filter((t): t is string => typeof t === 'string');
    return withPathLocks(located, () => applyBatch(args, targets, ctx));
  },
});

async function applyBatch(
  args: z.infer<typeof schema>,
  targets: Array<string | Error>,
  ctx: ToolContext,
): Promise<ToolResult> {
  const files = new Map<string, FileState>();
  const failAt = (i: number, p: Patch, msg: string) =>
    fail(`patch ${i + 1} (${p.op} ${p.path}): ${msg}; nothing was written`);

  for (const [i, p] of args.patches.entries()) {
    const abs = targets[i] as string | Error;
    if (abs instanceof PathRefused) return failAt(i, p, `refused: ${abs.message}`);
    if (abs instanceof Error) return failAt(i, p, abs.message);
    let f = files.get(abs);
    if (!f) {
      f = {
        abs,
        shown: ctx.paths.display(abs),
        before: null,
        stat: null,
        current: null,
        ops: [],
        readChecked: false,
      };
      try {
        const now = await readCurrent(ctx, abs);
        if (now.exists) {
          if (now.kind !== 'file') return failAt(i, p, 'not a regular file');
          if (now.data === null) return failAt(i, p, `too large (${now.stat.size} bytes)`);
          f.before = now.data;
          f.stat = now.stat;
          f.current = f.before.toString('utf8');
        }
      } catch (err) {
        return failAt(i, p, err instanceof PathRefused ? `refused: ${err.message}` : (err as Error).message);
      }
      files.set(abs, f);
    }
    const beforeHash = f.before ? sha256(f.before) : null;
    if (p.expected_before_hash && p.expected_before_hash.toLowerCase() !== beforeHash) {
      return failAt(
        i,
        p,
        `stale: expected sha256 ${p.expected_before_hash} but the file is ${beforeHash ?? 'missing'}`,
      );
    }
    if (p.op === 'create') {
      if (f.current !== null) return failAt(i, p, 'already exists; create never overwrites (use replace or edit)');
      f.current = p.content as string;
    } else if (p.op === 'replace') {
      if (f.current === null) return failAt(i, p, 'does not exist; use create');
      f.current = p.content as string;
    } else {
      if (f.current === null) return failAt(i, p, 'does not exist');
      if (f.before && looksBinary(f.before.subarray(0, 8192))) return failAt(i, p, 'binary file');
      if (f.before && f.stat && !f.readChecked) {
        const st = f.stat;
        const stale = staleReason(f.shown, await lastRead(ctx.db, ctx.conversationId, f.abs), {
          size: st.size,
          mtimeMs: st.mtimeMs,
          sha256: beforeHash as string,
        });
        if (stale) return failAt(i, p, stale.slice(f.shown.length + 2));
        f.readChecked = true;
      }
      const e = applyEdit(f.current, {
        old_string: p.old_string as string,
        new_string: p.new_string as string,
        replace_all: p.replace_all,
        near_line: p.near_line,
      });
      if (!e.ok) return failAt(i, p, e.error);
      f.current = e.content;
    }
    f.ops.push(p.op);
  }

  const done: PlannedWrite[] = [];
  const lines: string[] = [];
  for (const f of files.values()) {
    if (f.current === null) continue;
    if (f.before?.equals(Buffer.from(f.current, 'utf8'))) {
      lines.push(`${f.shown}: unchanged`);
      continue;
    }
    const w: PlannedWrite = {
      abs: f.abs,
      operation: f.before ? [...new Set(f.ops)].join('+') : 'create',
      before: f.before,
      after: f.current,
    };
    try {
      const h = await commitWrite(ctx, w, { batch: true });
      done.push(w);
      lines.push(`${f.shown}: ${w.operation} (${formatBytes(Buffer.byteLength(f.current))}, sha256 ${h})`);
    } catch (err) {
      const problems = await rollback(ctx, done);
      const tail = problems.length ? `; rollback problems: ${problems.join('; ')}` : '; earlier writes were undone';
      return fail(`${f.shown}: write failed: ${(err as Error).message}${tail}`);
    }
  }
  return {
    output: `Applied ${args.patches.length} patch${args.patches.length === 1 ? '' : 'es'}:\n${lines.join('\n')}`,
    summary: `patched ${files.size} file${files.size === 1 ? '' : 's'}`,
  };
}

function previewPatch(p: Patch): string {
  if (p.op === 'edit') return `edit ${p.path}${editScope(p)}\n${diffPreview(p.old_string ?? '', p.new_string ?? '')}`;
  const content = p.content ?? '';
  return `${p.op} ${p.path} (${formatBytes(Buffer.byteLength(content))})\n${content}`;
}
