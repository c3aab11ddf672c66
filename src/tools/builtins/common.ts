/**
 * Small helpers shared by the built-in tools: failed results, the wording of a refused or failed
 * file operation, and the display form of a path.
 */
import { PathRefused } from '../confined/open.js';
import { errnoWords } from '../confined/proc-fd.js';
import type { AccessMode } from '../path-policy.js';
import type { ToolContext, ToolResult } from '../types.js';

/** A failed result with a clear message for the model. */
export function fail(message: string, summary?: string): ToolResult {
  return { output: message, status: 'failed', summary: summary ?? message.split('\n')[0] };
}

/**
 * The display form of a path a tool was given, before it was opened (for the messages of a
 * failed open): workspace-relative when it is placed inside the workspace, else as given.
 */
export function shownPath(ctx: ToolContext, input: string, mode: AccessMode = 'read'): string {
  const placed = ctx.paths.place(input, mode);
  return placed.ok ? ctx.paths.display(placed.abs) : input;
}

/**
 * The failed result of a confined file operation: a policy refusal says `refused: <reason>`, a
 * filesystem error is worded by {@link fsError}.
 */
export function confinedFailure(display: string, err: unknown): ToolResult {
  if (err instanceof PathRefused) return fail(`refused: ${err.message}`);
  return fsError(display, err);
}

/** Errno code of a thrown value, if any. */
export function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** A human message for a filesystem error on `display`. */
export function fsError(display: string, err: unknown): ToolResult {
  const code = errno(err);
  if (code === 'ENOENT') return fail(`${display}: no such file or directory`);
  if (code === 'EISDIR') return fail(`${display}: is a directory`);
  if (code === 'ENOTDIR') return fail(`${display}: a parent is not a directory`);
  if (code === 'EACCES' || code === 'EPERM') return fail(`${display}: permission denied`);
  if (code === 'ELOOP') return fail(`${display}: too many symlinks`);
  return fail(`${display}: ${errnoWords(err)}`);
}

/** Format a number of bytes for people. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Number lines like `cat -n`: right-aligned number, tab, text. */
export function numberLines(lines: string[], first: number): string {
  return lines.map((l, i) => `${String(first + i).padStart(6)}\t${l}`).join('\n');
}
