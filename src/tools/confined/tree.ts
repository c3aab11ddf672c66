/**
 * Walking a workspace tree the way `rg` does by default, through held folder descriptors:
 * `.gitignore` files are honoured (from the root down), `.git` and `node_modules` are skipped,
 * hidden entries are skipped unless asked for, symlinks are reported but never followed, and
 * deny-glob matches are never entered or returned. Breadth-first, entries sorted by name, so a
 * capped walk shows the shallow levels. Each folder is read from a descriptor opened by name
 * below its parent with `O_NOFOLLOW`, and a file is opened the same way (`TreeEntry.open`): a
 * folder swapped for a symlink during the walk is skipped, not followed.
 */
import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { isInside, type PathPolicy } from '../path-policy.js';
import { type OpenedEntry, openEntry, protectedInodes } from './open.js';
import { FLAGS, fdPath, linkTextAt } from './proc-fd.js';

/** Folders never walked into. */
export const ALWAYS_SKIPPED = new Set(['.git', 'node_modules']);

/** Folders held open while waiting for their turn; deeper queues are reopened from the start. */
const HELD_FOLDERS = 128;

/** Files opened at once with {@link TreeOptions.openFiles}. */
const OPEN_GROUP = 64;

/** Largest `.gitignore` read. */
const MAX_IGNORE_BYTES = 1024 * 1024;

/** One entry found by {@link walkTree}. */
export interface TreeEntry {
  abs: string;
  /** Path relative to the walk's start. */
  rel: string;
  kind: 'file' | 'dir' | 'symlink' | 'other';
  /** 1 for direct children of the start. */
  depth: number;
  /**
   * Open the entry for reading by its name in the folder being walked (call it before the walk
   * moves on). Null when it is no regular file now, is one of switchboard's files, or the walk has
   * left its folder.
   */
  open(): Promise<FileHandle | null>;
  /** A symlink's text (null for anything else). */
  linkText(): Promise<string | null>;
  /**
   * With {@link TreeOptions.openFiles}: the file, opened (null when it is no regular file now or
   * is one of switchboard's files); the caller closes it.
   */
  handle?: FileHandle | null;
}

/** Options of {@link walkTree}. */
export interface TreeOptions {
  policy: PathPolicy;
  /** The allowed root containing the start (deny globs are relative to it). */
  root: string;
  includeHidden?: boolean;
  /** Deepest level returned (1 = direct children); default unlimited. */
  maxDepth?: number;
  signal?: AbortSignal;
  /**
   * Open every regular file as it is found (a group at a time, in parallel) and hand it over as
   * {@link TreeEntry.handle}; the caller closes each one.
   */
  openFiles?: boolean;
  /** With `openFiles`: only files whose path from the start passes are opened (others get null). */
  fileFilter?(rel: string): boolean;
}

interface IgnoreLayer {
  base: string;
  ig: Ignore;
}

interface Pending {
  abs: string;
  /** Names from the start. */
  parts: string[];
  layers: IgnoreLayer[];
  /** Held open when there was room; else reopened from the start when its turn comes. */
  handle: FileHandle | null;
}

async function readIgnoreAt(dirFd: number): Promise<string | null> {
  let fh: FileHandle;
  try {
    fh = await fs.open(fdPath(dirFd, '.gitignore'), FLAGS.read);
  } catch {
    return null;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size > MAX_IGNORE_BYTES) return null;
    return await fh.readFile('utf8');
  } catch {
    return null;
  } finally {
    await fh.close();
  }
}

function layerOf(base: string, text: string | null): IgnoreLayer | null {
  return text === null ? null : { base, ig: ignore().add(text) };
}

function ignoredBy(layers: IgnoreLayer[], abs: string, isDir: boolean): boolean {
  for (const { base, ig } of layers) {
    const rel = path.relative(base, abs).split(path.sep).join('/');
    if (rel && ig.ignores(isDir ? `${rel}/` : rel)) return true;
  }
  return false;
}

/** `.gitignore` files from the root down to the start's parent (each read confined). */
async function ancestorLayers(policy: PathPolicy, root: string, start: string): Promise<IgnoreLayer[]> {
  if (!isInside(root, start) || start === root) return [];
  const chain: string[] = [];
  for (let d = path.dirname(start); isInside(root, d); d = path.dirname(d)) {
    chain.unshift(d);
    if (d === root) break;
  }
  const layers: IgnoreLayer[] = [];
  for (const d of chain) {
    let opened: OpenedEntry | null = null;
    try {
      opened = await openEntry(policy, d, 'read');
      const layer = layerOf(d, await readIgnoreAt(opened.handle.fd));
      if (layer) layers.push(layer);
    } catch {
      // unreadable or refused: no rules from there
    } finally {
      await opened?.handle.close();
    }
  }
  return layers;
}

/** Open a folder below `start` by names, none of them through a symlink; null when that fails. */
async function reopen(start: FileHandle, parts: string[]): Promise<FileHandle | null> {
  let dir: FileHandle | null = null;
  try {
    for (const name of parts) {
      const next: FileHandle = await fs.open(fdPath((dir ?? start).fd, name), FLAGS.dir);
      await dir?.close();
      dir = next;
    }
    return dir;
  } catch {
    await dir?.close();
    return null;
  }
}

/**
 * Walk the folder `start` (opened by `openEntry`, kept open by the caller), yielding entries
 * breadth-first.
 */
export async function* walkTree(start: OpenedEntry, options: TreeOptions): AsyncGenerator<TreeEntry> {
  const { policy, root } = options;
  const inodes = await protectedInodes(policy);
  let level: Pending[] = [
    { abs: start.abs, parts: [], layers: await ancestorLayers(policy, root, start.abs), handle: null },
  ];
  let next: Pending[] = [];
  let held = 0;
  /** Files opened for the group being yielded, not handed to the caller yet. */
  let unyielded: Array<FileHandle | null> = [];
  try {
    for (let depth = 1; level.length > 0; depth++) {
      if (options.maxDepth !== undefined && depth > options.maxDepth) return;
      next = [];
      for (const pending of level) {
        if (options.signal?.aborted) return;
        let dir = pending.handle;
        if (dir) held--;
        else dir = pending.parts.length === 0 ? start.handle : await reopen(start.handle, pending.parts);
        pending.handle = null;
        if (!dir) continue; // gone, or no longer a folder: skip it like rg does
        // Once the folder is closed its number may name another file: its entries stop answering.
        const folder = { open: true };
        try {
          const own = layerOf(pending.abs, await readIgnoreAt(dir.fd));
          const layers = own ? [...pending.layers, own] : pending.layers;
          let names: import('node:fs').Dirent[];
          try {
            names = await fs.readdir(fdPath(dir.fd), { withFileTypes: true });
          } catch {
            continue; // unreadable folder: skip it like rg does
          }
          names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
          const taken: Array<{ d: import('node:fs').Dirent; abs: string; kind: TreeEntry['kind'] }> = [];
          for (const d of names) {
            if (ALWAYS_SKIPPED.has(d.name)) continue;
            if (!options.includeHidden && d.name.startsWith('.')) continue;
            const abs = path.join(pending.abs, d.name);
            const isDir = d.isDirectory();
            const relToRoot = path.relative(root, abs);
            if (policy.isDenied(relToRoot) || (isDir && policy.isDenied(`${relToRoot}/x`))) continue;
            if (!isDir && policy.isProtected(abs)) continue;
            if (policy.isHidden(abs)) continue; // another conversation's uploads
            if (ignoredBy(layers, abs, isDir)) continue;
            taken.push({
              d,
              abs,
              kind: isDir ? 'dir' : d.isFile() ? 'file' : d.isSymbolicLink() ? 'symlink' : 'other',
            });
          }
          const parentFd = dir.fd;
          for (let g = 0; g < taken.length; g += OPEN_GROUP) {
            const group = taken.slice(g, g + OPEN_GROUP);
            // Files are opened a group at a time, in parallel, while their folder is held.
            unyielded = options.openFiles
              ? await Promise.all(
                  group.map((t) =>
                    t.kind === 'file' && (!options.fileFilter || options.fileFilter(path.relative(start.abs, t.abs)))
                      ? openChildFile(parentFd, t.d.name, inodes)
                      : null,
                  ),
                )
              : [];
            for (const [k, { d, abs, kind }] of group.entries()) {
              const handle = unyielded[k] ?? null;
              unyielded[k] = null; // from here on the caller's
              yield {
                abs,
                rel: path.relative(start.abs, abs),
                kind,
                depth,
                ...(options.openFiles ? { handle } : {}),
                open: async () => (folder.open ? openChildFile(parentFd, d.name, inodes) : null),
                linkText: async () => (folder.open ? linkTextAt(parentFd, d.name).catch(() => null) : null),
              };
              if (kind === 'dir' && (options.maxDepth === undefined || depth < options.maxDepth)) {
                const parts = [...pending.parts, d.name];
                let queued: FileHandle | null = null;
                if (held < HELD_FOLDERS) {
                  queued = await fs.open(fdPath(dir.fd, d.name), FLAGS.dir).catch(() => null);
                  if (!queued) continue; // swapped for something else meanwhile: not followed
                  held++;
                }
                next.push({ abs, parts, layers, handle: queued });
              }
            }
            unyielded = [];
          }
        } finally {
          folder.open = false;
          if (dir !== start.handle) await dir.close();
        }
      }
      level = next;
      next = [];
    }
  } finally {
    // A walk stopped early (a cap, a cancel) still holds the folders it queued and the files it
    // opened ahead.
    for (const p of [...level, ...next]) await p.handle?.close();
    for (const h of unyielded) await h?.close();
  }
}

async function openChildFile(dirFd: number, name: string, inodes: Map<string, string>): Promise<FileHandle | null> {
  let fh: FileHandle;
  try {
    fh = await fs.open(fdPath(dirFd, name), FLAGS.read);
  } catch {
    return null;
  }
  try {
    const st = await fh.stat();
    if (st.isFile() && !inodes.has(`${st.dev}:${st.ino}`)) return fh;
  } catch {
    // fall through: not usable
  }
  await fh.close();
  return null;
}
