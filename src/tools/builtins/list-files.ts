/**
 * `list_files {path?, glob?, max_depth?, include_hidden?}`: the files and folders under a
 * workspace folder, respecting `.gitignore`, skipping `.git`, `node_modules` and deny-glob
 * matches; symlinks are shown with their target, never followed. Capped at 1000 entries.
 */
import picomatch from 'picomatch';
import { z } from 'zod';
import { type OpenedEntry, openEntry } from '../confined/open.js';
import { walkTree } from '../confined/tree.js';
import { defineTool } from '../define.js';
import type { ToolContext, ToolResult } from '../types.js';
import { confinedFailure, fail, shownPath } from './common.js';

/** Most entries listed. */
export const LIST_CAP = 1000;

const schema = z
  .object({
    path: z.string().min(1).optional(),
    glob: z.string().min(1).optional(),
    max_depth: z.number().int().min(1).max(50).optional().describe('1 = direct children'),
    include_hidden: z.boolean().optional(),
  })
  .strict();

/** The `list_files` tool. */
export const listFilesTool = defineTool({
  name: 'list_files',
  description: 'List files under a folder (folders end in /), honouring .gitignore.',
  schema,
  meta: { category: 'read', defaultApproval: 'allow', primaryKey: 'path', subAgent: true, source: 'builtin' },
  describe: (a) => `list_files ${a.path ?? '.'}${a.glob ? ` ${a.glob}` : ''}`,
  async execute(args, ctx) {
    let start: OpenedEntry;
    try {
      start = await openEntry(ctx.paths, args.path ?? '.', 'read');
    } catch (err) {
      return confinedFailure(shownPath(ctx, args.path ?? '.'), err);
    }
    try {
      return await listFrom(start, args, ctx);
    } finally {
      await start.handle.close();
    }
  },
});

async function listFrom(start: OpenedEntry, args: z.infer<typeof schema>, ctx: ToolContext): Promise<ToolResult> {
  const shown = ctx.paths.display(start.abs);
  if (!start.stat.isDirectory()) return fail(`${shown}: not a folder; use read_file for files`);
  const matcher = args.glob
    ? picomatch(args.glob, { dot: args.include_hidden ?? false, basename: !args.glob.includes('/') })
    : null;
  const out: string[] = [];
  let capped = false;
  for await (const e of walkTree(start, {
    policy: ctx.paths,
    root: start.root,
    includeHidden: args.include_hidden,
    maxDepth: args.max_depth,
    signal: ctx.signal,
  })) {
    const rel = e.rel.split('\\').join('/');
    if (matcher && (e.kind === 'dir' || !matcher(rel))) continue;
    if (out.length >= LIST_CAP) {
      capped = true;
      break;
    }
    const display = ctx.paths.display(e.abs);
    if (e.kind === 'dir') out.push(`${display}/`);
    else if (e.kind === 'symlink') out.push(`${display} -> ${(await e.linkText()) ?? '?'}`);
    else out.push(display);
  }
  out.sort();
  const head = `${shown}: ${out.length} entr${out.length === 1 ? 'y' : 'ies'}${args.glob ? ` matching ${args.glob}` : ''}`;
  const notice = capped ? `\n[capped at ${LIST_CAP} entries; narrow with path, glob or max_depth]` : '';
  if (out.length === 0) return { output: `${head}`, summary: head };
  return { output: `${head}\n${out.join('\n')}${notice}`, summary: head };
}
