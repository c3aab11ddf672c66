/**
 * `man {page, section?}`: the formatted manual page as plain text (`man -P cat`, overstrikes
 * removed), 100 columns wide, capped at `tools.read_max_bytes`. Clear errors when `man` is not
 * installed or the page does not exist.
 */
import { spawn } from 'node:child_process';
import { z } from 'zod';
import { defineTool } from '../define.js';
import { HeadTail } from '../output-cap.js';
import type { ToolResult } from '../types.js';
import { fail } from './common.js';

const schema = z
  .object({
    page: z
      .string()
      .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:+@-]*$/, 'a manual page name such as "grep" or "printf"')
      .max(100)
      .describe('Manual page name, e.g. "grep", "socket", "git-rebase".'),
    section: z
      .string()
      .regex(/^[1-9n][a-z0-9]*$/, 'a section such as "1", "3", "3p" or "8"')
      .max(10)
      .optional()
      .describe('Section: 1 commands, 2 system calls, 3 library functions, 5 file formats, 8 admin.'),
  })
  .strict();

/** Strip backspace overstrikes (bold `X\bX`, underline `_\bX`) and ANSI sequences. */
export function plainText(s: string): string {
  return s.replace(/\x1b\[[0-9;]*m/g, '').replace(/.\x08/g, '');
}

function runMan(
  args: string[],
  signal: AbortSignal,
  maxBytes: number,
): Promise<{ code: number | null; out: string; err: string; missing: boolean }> {
  return new Promise((resolve) => {
    const child = spawn('man', args, {
      env: {
        ...process.env,
        MANWIDTH: '100',
        MANPAGER: 'cat',
        PAGER: 'cat',
        MAN_KEEP_FORMATTING: '',
        GROFF_NO_SGR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      signal,
    });
    const out = new HeadTail(maxBytes);
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => {
      if (err.length < 2000) err += d.toString('utf8');
    });
    child.on('error', (e: NodeJS.ErrnoException) =>
      resolve({ code: null, out: '', err: e.message, missing: e.code === 'ENOENT' }),
    );
    child.on('close', (code) => resolve({ code, out: out.text(), err, missing: false }));
  });
}

/** The `man` tool. */
export const manTool = defineTool({
  name: 'man',
  description: 'Read a manual page (commands, system calls, C functions, file formats) as plain text.',
  schema,
  meta: { category: 'read', defaultApproval: 'allow', primaryKey: 'page', subAgent: true, source: 'builtin' },
  describe: (a) => `man ${a.section ? `${a.section} ` : ''}${a.page}`,
  async execute(args, ctx): Promise<ToolResult> {
    const argv = ['-P', 'cat', '--', ...(args.section ? [args.section] : []), args.page];
    const r = await runMan(argv, ctx.signal, ctx.config.tools.read_max_bytes);
    const name = `${args.page}${args.section ? `(${args.section})` : ''}`;
    if (r.missing) return fail('man is not installed on this machine (Debian: apt-get install man-db)');
    if (r.code !== 0 || r.out.trim() === '') {
      const why = r.err.trim().split('\n')[0] || `man exited with status ${r.code}`;
      return fail(r.code === 16 || /no manual entry/i.test(why) ? `no manual page for ${name}` : `man ${name}: ${why}`);
    }
    const text = plainText(r.out)
      .replace(/\n{3,}/g, '\n\n')
      .trimEnd();
    return { output: text, summary: `man ${name}` };
  },
});
