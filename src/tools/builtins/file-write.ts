/**
 * The write path shared by `write_file`, `edit_file` and `write_patch`: create parents, write
 * atomically (keeping the mode), record the new content as read by this conversation (so a
 * follow-up edit needs no re-read), and write the `file_write` audit record.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { atomicWrite, sha256 } from '../file-io.js';
import { recordRead } from '../../store/repos/file-reads.js';
import type { ToolContext } from '../types.js';

/** One planned write. */
export interface PlannedWrite {
  abs: string;
  /** `create`, `replace`, `edit`, `write`. */
  operation: string;
  /** Old content, or null when the file does not exist yet (or was too large to hold). */
  before: Buffer | null;
  /** The file exists although `before` is null (too large to hold in memory). */
  existed?: boolean;
  /** sha256 of the old content when `before` is not held. */
  beforeHash?: string;
  after: string;
}

/** Write one file and audit it; returns the new sha256. Throws on I/O failure. */
export async function commitWrite(
  ctx: ToolContext,
  w: PlannedWrite,
  extra: Record<string, unknown> = {},
): Promise<string> {
  await fs.mkdir(path.dirname(w.abs), { recursive: true });
  const data = Buffer.from(w.after, 'utf8');
  await atomicWrite(w.abs, data, { noClobber: w.before === null && !w.existed });
  const after = sha256(data);
  const st = await fs.stat(w.abs);
  await recordRead(ctx.db, ctx.conversationId, w.abs, st, after);
  await ctx.audit('file_write', {
    operation: w.operation,
    path: ctx.paths.display(w.abs),
    sha256_before: w.beforeHash ?? (w.before ? sha256(w.before) : null),
    sha256_after: after,
    bytes: data.length,
    ...extra,
  });
  return after;
}

/** Put back what a failed batch already wrote: restore old contents, remove created files. */
export async function rollback(done: PlannedWrite[]): Promise<string[]> {
  const problems: string[] = [];
  for (const w of [...done].reverse()) {
    try {
      if (w.before === null) await fs.rm(w.abs, { force: true });
      else await atomicWrite(w.abs, w.before);
    } catch (err) {
      problems.push(`${w.abs}: ${(err as Error).message}`);
    }
  }
  return problems;
}
