/**
 * Writing in the workspace through held folder descriptors (`open.ts`): missing folders are made
 * one at a time below a checked one, a new file is created with `O_CREAT | O_EXCL | O_NOFOLLOW`
 * in the checked folder, and an atomic write renames its temporary file within that same folder
 * (both names resolved from the folder's descriptor). A symlink swapped in anywhere on the way is
 * refused or replaced, never written through.
 */
import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { PathPolicy } from '../path-policy.js';
import { PathRefused, protectedInodes, type ReachedParent, reachParent } from './open.js';
import { errnoError, FLAGS, fdPath } from './proc-fd.js';

/** Options of {@link writeAtomic}. */
export interface AtomicWriteOptions {
  /** Fail with EEXIST instead of replacing an existing file (used by `create`). */
  noClobber?: boolean;
  /** File mode for the result; defaults to the existing file's mode, else 0o644. */
  mode?: number;
}

/** A file written: where it is, and its facts right after the write. */
export interface Written {
  abs: string;
  stat: Stats;
}

async function writableParent(policy: PathPolicy, input: string): Promise<ReachedParent & { name: string }> {
  const parent = await reachParent(policy, input, 'write', { missing: 'create' });
  if (parent.name === null) {
    await parent.dir.close();
    throw errnoError('EISDIR', `${input}: is a directory`);
  }
  return parent as ReachedParent & { name: string };
}

/** The mode of the file `name` in `dir` now (refusing one of switchboard's files), or undefined. */
async function existingMode(
  policy: PathPolicy,
  parent: ReachedParent & { name: string },
  input: string,
): Promise<number | undefined> {
  let fh: FileHandle;
  try {
    fh = await fs.open(fdPath(parent.dir.fd, parent.name), FLAGS.read);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // Nothing there, or a symlink swapped in since the walk: the rename replaces the link itself.
    if (code === 'ENOENT' || code === 'ELOOP') return undefined;
    throw err;
  }
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw errnoError('EISDIR', `${input}: is a directory`);
    const same = (await protectedInodes(policy)).get(`${st.dev}:${st.ino}`);
    if (same) throw new PathRefused(`${input}: ${policy.protectedWhat(same)}; no tool may read or change it`);
    return st.mode & 0o7777;
  } finally {
    await fh.close();
  }
}

/**
 * Write `data` to the file `input` names, atomically: a temporary file in the same (checked)
 * folder is written and fsynced, then renamed over the name (or hard-linked when `noClobber`,
 * which fails if the name appeared meanwhile), then the folder is fsynced. Readers never see a
 * half-written file; missing folders are created. A symlink as the last name is followed by the
 * rules of `open.ts` (a link to a file elsewhere in the workspace writes that file).
 */
export async function writeAtomic(
  policy: PathPolicy,
  input: string,
  data: Buffer | string,
  options: AtomicWriteOptions = {},
): Promise<Written> {
  const parent = await writableParent(policy, input);
  const { dir, name } = parent;
  const tmp = `.${name}.${randomBytes(6).toString('hex')}.tmp`;
  let created = false;
  try {
    const mode = options.mode ?? (await existingMode(policy, parent, input));
    const fh = await fs.open(fdPath(dir.fd, tmp), FLAGS.create, mode ?? 0o644);
    created = true;
    let stat: Stats;
    try {
      await fh.writeFile(data);
      // open() applies the umask; chmod sets the kept mode exactly.
      if (mode !== undefined) await fh.chmod(mode);
      await fh.sync();
      stat = await fh.stat();
    } finally {
      await fh.close();
    }
    if (options.noClobber) {
      await fs.link(fdPath(dir.fd, tmp), fdPath(dir.fd, name));
      await fs.unlink(fdPath(dir.fd, tmp));
    } else {
      await fs.rename(fdPath(dir.fd, tmp), fdPath(dir.fd, name));
    }
    created = false;
    await dir.sync().catch(() => undefined); // some filesystems refuse fsync on a folder; the rename is still atomic
    return { abs: path.join(parent.dirAbs, name), stat };
  } finally {
    if (created) await fs.unlink(fdPath(dir.fd, tmp)).catch(() => undefined);
    await dir.close();
  }
}

/**
 * Remove the file `input` names (the name itself: a symlink is removed, not its target).
 * Missing is not an error.
 */
export async function removeFile(policy: PathPolicy, input: string): Promise<void> {
  const parent = await reachParent(policy, input, 'write', { missing: 'fail', followLast: false }).catch((err) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  });
  if (!parent) return;
  try {
    if (parent.name === null) throw errnoError('EISDIR', `${input}: is a directory`);
    await fs.unlink(fdPath(parent.dir.fd, parent.name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  } finally {
    await parent.dir.close();
  }
}

/** A new file created by {@link createFile}: write to `handle`, then `close()` or `discard()`. */
export interface NewFile {
  handle: FileHandle;
  abs: string;
  /** Close the file (it stays). */
  close(): Promise<void>;
  /** Close and remove the file (a transfer that failed leaves nothing behind). */
  discard(): Promise<void>;
}

/**
 * Create a new file (never an existing one, never through a symlink) in a checked folder,
 * creating missing folders. The folder stays held until the file is closed or discarded.
 */
export async function createFile(policy: PathPolicy, input: string, mode = 0o644): Promise<NewFile> {
  const parent = await writableParent(policy, input);
  let handle: FileHandle;
  try {
    handle = await fs.open(fdPath(parent.dir.fd, parent.name), FLAGS.create, mode);
  } catch (err) {
    await parent.dir.close();
    throw err;
  }
  let done = false;
  const finish = async (remove: boolean) => {
    if (done) return;
    done = true;
    try {
      await handle.close();
      if (remove) await fs.unlink(fdPath(parent.dir.fd, parent.name)).catch(() => undefined);
    } finally {
      await parent.dir.close();
    }
  };
  return {
    handle,
    abs: path.join(parent.dirAbs, parent.name),
    close: () => finish(false),
    discard: () => finish(true),
  };
}
