/**
 * The write path shared by `write_file`, `edit_file` and `write_patch`: write atomically through
 * the confined primitive (missing folders created, the mode kept), record the new content as read
 * by this conversation (so a follow-up edit needs no re-read), and write the `file_write` audit
 * record. Also reading the current content of a file about to be written.
 */
import type { Stats } from 'node:fs';
import { recordRead } from '../../store/repos/file-reads.js';
import { openEntry } from '../confined/open.js';
import { removeFile, writeAtomic } from '../confined/write.js';
import { sha256, sha256File } from '../file-io.js';
import type { ToolContext } from '../types.js';
import { errno } from './common.js';

/** Files larger than this are not edited in memory. */
export const MAX_EDIT_BYTES = 16 * 1024 * 1024;

/** One planned write. */
export interface PlannedWrite {
  /** Where the file is (as located in the writable roots). */
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

/** A file as it is before a write: nothing there, or its facts and content. */
export type Current =
  | { exists: false }
  | { exists: true; stat: Stats; data: Buffer | null; hash: string; kind: 'file' | 'dir' | 'other' };

/**
 * What is at `abs` now, read through the confined primitive in the writable roots. Files up to
 * `holdBytes` are held (others only hashed); folders and special files are reported, not read.
 * @throws PathRefused or an errno error other than ENOENT.
 */
export async function readCurrent(ctx: ToolContext, abs: string, holdBytes = MAX_EDIT_BYTES): Promise<Current> {
  let opened: Awaited<ReturnType<typeof openEntry>>;
  try {
    opened = await openEntry(ctx.paths, abs, 'write');
  } catch (err) {
    if (errno(err) === 'ENOENT') return { exists: false };
    throw err;
  }
  try {
    const st = opened.stat;
    if (!st.isFile()) return { exists: true, stat: st, data: null, hash: '', kind: st.isDirectory() ? 'dir' : 'other' };
    if (st.size > holdBytes)
      return { exists: true, stat: st, data: null, hash: await sha256File(opened.handle), kind: 'file' };
    const data = await opened.handle.readFile();
    return { exists: true, stat: st, data, hash: sha256(data), kind: 'file' };
  } finally {
    await opened.handle.close();
  }
}

/** Write one file and audit it; returns the new sha256. Throws on I/O failure or a refusal. */
export async function commitWrite(
  ctx: ToolContext,
  w: PlannedWrite,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const data = Buffer.from(w.after, 'utf8');
  const written = await writeAtomic(ctx.paths, w.abs, data, { noClobber: w.before === null && !w.existed });
  const after = sha256(data);
  await recordRead(ctx.db, ctx.conversationId, written.abs, written.stat, after);
  await ctx.audit('file_write', {
    operation: w.operation,
    path: ctx.paths.display(written.abs),
    sha256_before: w.beforeHash ?? (w.before ? sha256(w.before) : null),
    sha256_after: after,
    bytes: data.length,
    ...extra,
  });
  return after;
}

/** Put back what a failed batch already wrote: restore old contents, remove created files. */
export async function rollback(ctx: ToolContext, done: PlannedWrite[]): Promise<string[]> {
  const problems: string[] = [];
  for (const w of [...done].reverse()) {
    try {
      if (w.before === null) await removeFile(ctx.paths, w.abs);
      else await writeAtomic(ctx.paths, w.abs, w.before);
    } catch (err) {
      problems.push(`${w.abs}: ${(err as Error).message}`);
    }
  }
  return problems;
}
