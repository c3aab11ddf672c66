/**
 * The one way the tools reach a path in the workspace. The path is placed among the allowed roots
 * by the policy, then walked from the root's directory descriptor one name at a time, each open
 * refusing to follow a symlink (`proc-fd.ts`): another process swapping a folder for a symlink
 * meanwhile makes that open fail instead of leading elsewhere. A symlink met on the way is read
 * and its target placed among the roots again, then walked again from a root with the same rules
 * (at most 40 of them, as the kernel allows): links that stay inside the roots work as before,
 * links that leave them are refused. What is finally opened is checked on its descriptor — where
 * it really is, whether it is one of switchboard's own files (by path and by inode) — never by
 * opening a path again.
 */
import type { Stats } from 'node:fs';
import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { SwitchboardError } from '../../errors.js';
import type { AccessMode, PathPolicy } from '../path-policy.js';
import { errnoError, FLAGS, fdPath, linkTextAt, maybeSymlink, procFdAvailable, realPathOf } from './proc-fd.js';

/** Most symlinks followed for one path (the kernel's own limit). */
export const MAX_LINKS = 40;

/** A path the policy refuses; the message is the reason, naming the path as the tool was given it. */
export class PathRefused extends SwitchboardError {
  constructor(reason: string) {
    super('path_refused', reason);
  }
}

/** What to do with folders of the path that do not exist. */
export type MissingFolders = 'fail' | 'create' | 'stop';

/** Options of {@link reachParent}. */
export interface ReachOptions {
  /** `fail` (ENOENT), `create` them (mkdir -p, for writes) or `stop` and report the rest. */
  missing: MissingFolders;
  /** Follow the last name when it is a symlink (placed among the roots again). Default true. */
  followLast?: boolean;
}

/** The folder that holds the last name of a path, opened and checked. */
export interface ReachedParent {
  /** The folder; the caller closes it. */
  dir: FileHandle;
  /** Where the folder really is. */
  dirAbs: string;
  /** The allowed root the folder is in. */
  root: string;
  /** The last name, or null when the path is a root itself (then `dir` is the target). */
  name: string | null;
  /** With `missing: 'stop'`: the names below `dir` that do not exist (the last name included). */
  missingNames: string[];
}

function assertProc(): void {
  if (!procFdAvailable()) {
    throw new SwitchboardError(
      'confined_fs_unavailable',
      'file tools need Linux with /proc mounted: they open files through /proc/self/fd so that no symlink swapped in meanwhile can lead outside the workspace',
    );
  }
}

function refuseUnlessOk<T extends { ok: true }>(r: T | { ok: false; reason: string }): T {
  if (!r.ok) throw new PathRefused(r.reason);
  return r;
}

/**
 * Open one folder below `dir` without following a symlink. Returns the symlink's text when the
 * name is one (the caller places its target again), creates the folder first with `create`.
 */
async function stepInto(dir: FileHandle, name: string, create: boolean): Promise<FileHandle | string> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fs.open(fdPath(dir.fd, name), FLAGS.dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && create && attempt === 0) {
        await fs.mkdir(fdPath(dir.fd, name), 0o777).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'EEXIST') throw e;
        });
        continue;
      }
      if (maybeSymlink(err)) {
        const text = await linkTextAt(dir.fd, name);
        if (text !== null) return text;
      }
      throw err;
    }
  }
}

/**
 * Walk to the folder holding the last name of `input`, from the root the policy places it in.
 * Every folder on the way is opened by name from the one before it, never through a symlink; a
 * symlink met is placed among the roots again (relative links from the folder they are in).
 * @throws PathRefused when the path (or a symlink's target) is outside the roots of `mode`,
 *   denied or one of switchboard's files; an errno error (ENOENT, ENOTDIR, ELOOP …) otherwise.
 */
export async function reachParent(
  policy: PathPolicy,
  input: string,
  mode: AccessMode,
  options: ReachOptions,
): Promise<ReachedParent> {
  assertProc();
  let target = input;
  for (let hop = 0; hop <= MAX_LINKS; hop++) {
    const placed = refuseUnlessOk(policy.place(target, mode, input));
    const parts = placed.rel === '.' ? [] : placed.rel.split(path.sep);
    // The root itself is opened by its path: it is the operator's setting, not the model's.
    let dir = await fs.open(placed.root, FLAGS.dir);
    let redirect: string | null = null;
    try {
      let i = 0;
      for (; i < parts.length - 1; i++) {
        const name = parts[i] as string;
        let next: FileHandle | string;
        try {
          next = await stepInto(dir, name, options.missing === 'create');
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT' && options.missing === 'stop') break;
          throw err;
        }
        if (typeof next === 'string') {
          redirect = path.join(path.resolve(await realPathOf(dir.fd), next), ...parts.slice(i + 1));
          break;
        }
        await dir.close();
        dir = next;
      }
      if (redirect === null) {
        const dirAbs = await realPathOf(dir.fd);
        const last = parts.at(-1);
        const stopped = i < parts.length - 1;
        if (last !== undefined && !stopped && options.followLast !== false) {
          const text = await linkTextAt(dir.fd, last).catch((err: NodeJS.ErrnoException) => {
            if (err.code === 'ENOENT') return null;
            throw err;
          });
          if (text !== null) redirect = path.resolve(dirAbs, text);
        }
        if (redirect === null) {
          const where = refuseUnlessOk(policy.check(dirAbs, mode, input));
          const missingNames = stopped ? parts.slice(i) : [];
          if (last !== undefined)
            refuseUnlessOk(policy.check(path.join(dirAbs, ...(stopped ? missingNames : [last])), mode, input));
          return { dir, dirAbs, root: where.root, name: last ?? null, missingNames };
        }
      }
    } catch (err) {
      await dir.close();
      throw err;
    }
    await dir.close();
    target = redirect;
  }
  throw errnoError('ELOOP', `${input}: too many symlinks`);
}

/** A file or folder opened through {@link openEntry}: its descriptor and what it is. */
export interface OpenedEntry {
  /** Open for reading; the caller closes it. */
  handle: FileHandle;
  /** Where it really is. */
  abs: string;
  /** The allowed root it is in, and its path from there. */
  root: string;
  rel: string;
  stat: Stats;
}

/** `dev:ino` of switchboard's own files as they are now (a hard link to one is the same file). */
export async function protectedInodes(policy: PathPolicy): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await Promise.all(
    policy.protectedPaths().map(async (p) => {
      const st = await fs.stat(p).catch(() => null);
      if (st) out.set(`${st.dev}:${st.ino}`, p);
    }),
  );
  return out;
}

/**
 * Check an opened descriptor: where it is must pass the policy, and it must not be one of
 * switchboard's files under another name.
 */
export async function verifyOpened(
  policy: PathPolicy,
  handle: FileHandle,
  mode: AccessMode,
  shownAs: string,
  inodes?: Map<string, string>,
): Promise<OpenedEntry> {
  const abs = await realPathOf(handle.fd);
  const placed = refuseUnlessOk(policy.check(abs, mode, shownAs));
  const stat = await handle.stat();
  const same = (inodes ?? (await protectedInodes(policy))).get(`${stat.dev}:${stat.ino}`);
  if (same) {
    throw new PathRefused(
      `${shownAs}: ${policy.protectedWhat(same) ?? "switchboard's own file"}; no tool may read or change it`,
    );
  }
  return { handle, abs, root: placed.root, rel: placed.rel, stat };
}

/**
 * Open what a path names (a file or a folder) for reading, confined to the roots of `mode`. A
 * FIFO or device is opened without waiting and left for the caller to refuse by its stat.
 */
export async function openEntry(policy: PathPolicy, input: string, mode: AccessMode): Promise<OpenedEntry> {
  for (let hop = 0; hop <= MAX_LINKS; hop++) {
    const parent = await reachParent(policy, input, mode, { missing: 'fail' });
    let handle = parent.dir;
    if (parent.name !== null) {
      try {
        handle = await fs.open(fdPath(parent.dir.fd, parent.name), FLAGS.read);
      } catch (err) {
        // Made a symlink after the walk looked: walk again, which follows it by the rules.
        if (maybeSymlink(err)) continue;
        throw err;
      } finally {
        await parent.dir.close();
      }
    }
    try {
      return await verifyOpened(policy, handle, mode, input);
    } catch (err) {
      await handle.close();
      throw err;
    }
  }
  throw errnoError('ELOOP', `${input}: too many symlinks`);
}

/**
 * Where a path leads, following symlinks by the same rules, without opening it: the real path of
 * the existing part plus the names that do not exist yet. For keys (locks, records), not access.
 */
export async function locate(policy: PathPolicy, input: string, mode: AccessMode): Promise<string> {
  const parent = await reachParent(policy, input, mode, { missing: 'stop' });
  try {
    if (parent.missingNames.length) return path.join(parent.dirAbs, ...parent.missingNames);
    return parent.name === null ? parent.dirAbs : path.join(parent.dirAbs, parent.name);
  } finally {
    await parent.dir.close();
  }
}
