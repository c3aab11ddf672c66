/**
 * Walking a workspace tree the way `rg` does by default: `.gitignore` files are honoured (from the
 * workspace root down), `.git` and `node_modules` are skipped, hidden entries are skipped unless
 * asked for, symlinks are reported but never followed, and deny-glob matches (and other
 * conversations' uploads) are never entered or returned. Breadth-first, entries sorted by name, so a capped walk shows the shallow levels.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { isInside, type PathPolicy } from './path-policy.js';

/** Folders never walked into. */
export const ALWAYS_SKIPPED = new Set(['.git', 'node_modules']);

/** One entry found by {@link walk}. */
export interface WalkEntry {
  abs: string;
  /** Path relative to the walk's start. */
  rel: string;
  kind: 'file' | 'dir' | 'symlink' | 'other';
  /** 1 for direct children of the start. */
  depth: number;
}

/** Options of {@link walk}. */
export interface WalkOptions {
  policy: PathPolicy;
  /** The allowed root containing `start` (deny globs are relative to it). */
  root: string;
  includeHidden?: boolean;
  /** Deepest level returned (1 = direct children); default unlimited. */
  maxDepth?: number;
  signal?: AbortSignal;
}

interface IgnoreLayer {
  base: string;
  ig: Ignore;
}

async function loadIgnore(dir: string): Promise<IgnoreLayer | null> {
  try {
    const text = await fs.readFile(path.join(dir, '.gitignore'), 'utf8');
    return { base: dir, ig: ignore().add(text) };
  } catch {
    return null;
  }
}

function ignoredBy(layers: IgnoreLayer[], abs: string, isDir: boolean): boolean {
  for (const { base, ig } of layers) {
    const rel = path.relative(base, abs).split(path.sep).join('/');
    if (rel && ig.ignores(isDir ? `${rel}/` : rel)) return true;
  }
  return false;
}

/** Walk `start` (a directory), yielding entries breadth-first. */
export async function* walk(start: string, options: WalkOptions): AsyncGenerator<WalkEntry> {
  const { policy, root } = options;
  // .gitignore files from the root down to the start's parent apply too.
  const initial: IgnoreLayer[] = [];
  if (isInside(root, start)) {
    const chain: string[] = [];
    for (let d = path.dirname(start); isInside(root, d); d = path.dirname(d)) {
      chain.unshift(d);
      if (d === root) break;
    }
    for (const d of chain) {
      const layer = await loadIgnore(d);
      if (layer) initial.push(layer);
    }
  }
  let level: { dir: string; layers: IgnoreLayer[] }[] = [{ dir: start, layers: initial }];
  for (let depth = 1; level.length > 0; depth++) {
    if (options.maxDepth !== undefined && depth > options.maxDepth) return;
    const next: { dir: string; layers: IgnoreLayer[] }[] = [];
    for (const { dir, layers: parentLayers } of level) {
      if (options.signal?.aborted) return;
      const own = await loadIgnore(dir);
      const layers = own ? [...parentLayers, own] : parentLayers;
      let names: import('node:fs').Dirent[];
      try {
        names = await fs.readdir(dir, { withFileTypes: true });
      } catch {
        continue; // unreadable folder: skip it like rg does
      }
      names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const d of names) {
        if (ALWAYS_SKIPPED.has(d.name)) continue;
        if (!options.includeHidden && d.name.startsWith('.')) continue;
        const abs = path.join(dir, d.name);
        const isDir = d.isDirectory();
        const relToRoot = path.relative(root, abs);
        if (policy.isDenied(relToRoot) || (isDir && policy.isDenied(`${relToRoot}/x`))) continue;
        if (!isDir && policy.isProtected(abs)) continue;
        if (policy.isHidden(abs)) continue; // another conversation's uploads
        if (ignoredBy(layers, abs, isDir)) continue;
        const kind = isDir ? 'dir' : d.isFile() ? 'file' : d.isSymbolicLink() ? 'symlink' : 'other';
        yield { abs, rel: path.relative(start, abs), kind, depth };
        if (isDir) next.push({ dir: abs, layers });
      }
    }
    level = next;
  }
}
