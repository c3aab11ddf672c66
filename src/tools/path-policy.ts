/**
 * The workspace path policy shared by every file tool, `bash` workdirs and attachments.
 * A path resolves against the workspace root, is canonicalised (`..` and symlinks resolved on the
 * longest existing ancestor) and compared component-wise against the allowed roots; deny globs
 * (secrets, keys, .env files) are never read, listed or searched, and neither are switchboard's
 * own files (configuration, database) wherever the workspace is. A conversation's copy of the
 * policy ({@link PathPolicy.withUploads}) also hides the upload folders of other conversations.
 * This is the policy only: the tools touch what it allows through `confined/`, which re-checks
 * every opened descriptor.
 */
import { readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';

/** Read or write access; write roots are a subset of read roots. */
export type AccessMode = 'read' | 'write';

/** A path that passed the policy. */
export interface ResolvedPath {
  ok: true;
  /** Canonical absolute path. */
  abs: string;
  /** Path relative to the root that contains it (for display and deny globs). */
  rel: string;
  /** The root that contains it. */
  root: string;
}

/** A refusal that names the path and the reason. */
export interface RefusedPath {
  ok: false;
  reason: string;
}

/**
 * Which uploads a conversation sees: inside `folder` (workspace-relative, e.g. `uploads`) only
 * `visible` (workspace-relative folders in it) and the folders on the way to them; everything
 * else under `folder` is hidden from the file tools and, with bubblewrap, from the shell.
 */
export interface UploadsView {
  folder: string;
  visible: readonly string[];
}

/** What the shell sandbox hides for a conversation: `hide` covered, then `show` in it shown again (absolute). */
export interface SandboxView {
  hide: string[];
  show: string[];
}

/** Options of {@link PathPolicy}. */
export interface PathPolicyOptions {
  root: string;
  extraReadRoots?: string[];
  extraWriteRoots?: string[];
  denyGlobs?: string[];
  /** Files no tool may touch whatever the roots are (see `protected-paths.ts`), canonical. */
  protectedFiles?: Array<{ abs: string; what: string }>;
  /** Uploads this policy sees (one conversation's); unset: all of them. */
  uploads?: UploadsView;
}

/** Canonicalise `p`: resolve symlinks on the longest existing ancestor, keep the rest as written. */
export function canonicalise(p: string): string {
  const abs = path.resolve(p);
  let existing = abs;
  const rest: string[] = [];
  for (;;) {
    try {
      const real = realpathSync(existing);
      return rest.length ? path.join(real, ...rest.reverse()) : real;
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return abs;
      rest.push(path.basename(existing));
      existing = parent;
    }
  }
}

/** True when `child` is `parent` or inside it, compared by path components. */
export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/** Decides which paths tools may touch. */
export class PathPolicy {
  /** Canonical workspace root. */
  readonly root: string;
  private readonly readRoots: string[];
  private readonly writeRoots: string[];
  private readonly denied: (p: string) => boolean;
  readonly denyGlobs: string[];
  private readonly protectedFiles: Map<string, string>;
  private readonly protectedNames: Set<string>;
  /** The uploads folder and the visible folders in it, canonical; undefined: every upload is visible. */
  private readonly uploads?: { folder: string; visible: string[] };

  constructor(private readonly options: PathPolicyOptions) {
    this.root = canonicalise(options.root);
    this.writeRoots = [this.root, ...(options.extraWriteRoots ?? []).map(canonicalise)];
    this.readRoots = [...this.writeRoots, ...(options.extraReadRoots ?? []).map(canonicalise)];
    this.denyGlobs = options.denyGlobs ?? [];
    this.denied = this.denyGlobs.length ? picomatch(this.denyGlobs, { dot: true }) : () => false;
    this.protectedFiles = new Map((options.protectedFiles ?? []).map((f) => [f.abs, f.what]));
    this.protectedNames = new Set([...this.protectedFiles.keys()].map((f) => path.basename(f)));
    if (options.uploads) {
      // Canonical, as the paths checked against them are (an `uploads` symlink is followed the same way).
      this.uploads = {
        folder: canonicalise(path.join(this.root, options.uploads.folder)),
        visible: options.uploads.visible.map((v) => canonicalise(path.join(this.root, v))),
      };
    }
  }

  /**
   * This policy for one conversation: the same roots and rules, seeing only the uploads of
   * `view` (undefined: all of them, as an admin's conversation does).
   */
  withUploads(view: UploadsView | undefined): PathPolicy {
    return new PathPolicy({ ...this.options, uploads: view });
  }

  /**
   * True for a canonical path inside the uploads folder that this conversation does not see:
   * neither in one of its folders nor on the way to one.
   */
  isHidden(abs: string): boolean {
    const u = this.uploads;
    if (!u || abs === u.folder || !isInside(u.folder, abs)) return false;
    return !u.visible.some((v) => isInside(v, abs) || isInside(abs, v));
  }

  /**
   * What exists now under the uploads folder (two levels: channel, chat) that this conversation
   * does not see and that lies inside `target` (a folder about to be searched): a search skips
   * them rather than reading them and dropping the results.
   */
  hiddenEntriesIn(target: string): string[] {
    const u = this.uploads;
    if (!u || !(isInside(target, u.folder) || isInside(u.folder, target))) return [];
    const out: string[] = [];
    const visit = (dir: string, depth: number) => {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return;
      }
      for (const name of names) {
        const abs = path.join(dir, name);
        if (this.isHidden(abs)) {
          if (isInside(target, abs)) out.push(abs);
        } else if (depth < 2) visit(abs, depth + 1);
      }
    };
    visit(u.folder, 1);
    return out;
  }

  /** What the shell sandbox hides for this conversation, or undefined when it sees every upload. */
  sandboxView(): SandboxView | undefined {
    const u = this.uploads;
    return u ? { hide: [u.folder], show: [...u.visible] } : undefined;
  }

  /** What a canonical path is when it is one of switchboard's own files (else undefined). */
  protectedWhat(abs: string): string | undefined {
    return this.protectedFiles.get(abs);
  }

  /**
   * True for one of switchboard's own files (configuration, database), given any absolute path
   * to it; only a path with a protected file's name is canonicalised (walks call this per file).
   */
  isProtected(abs: string): boolean {
    if (!this.protectedNames.has(path.basename(abs))) return false;
    return this.protectedFiles.has(abs) || this.protectedFiles.has(canonicalise(abs));
  }

  /** True when a root-relative path matches a deny glob (any of its parent folders counts too). */
  isDenied(rel: string): boolean {
    const norm = rel.split(path.sep).join('/');
    if (this.denied(norm)) return true;
    const parts = norm.split('/');
    for (let i = 1; i < parts.length; i++) {
      if (this.denied(`${parts.slice(0, i).join('/')}/`) || this.denied(parts.slice(0, i).join('/'))) return true;
    }
    return false;
  }

  /**
   * Resolve a path a tool was given; relative paths are taken from the workspace root. This
   * canonicalises a path string: use it for decisions about a path (approval rules, checking an
   * upload's name), never to open what it names — the file tools open through `confined/`.
   */
  resolve(input: string, mode: AccessMode): ResolvedPath | RefusedPath {
    const expanded = this.expand(input);
    if (typeof expanded !== 'string') return expanded;
    return this.check(canonicalise(path.resolve(this.root, expanded)), mode, input);
  }

  /**
   * Where a path lies among the roots, taken as written (`..` folded, symlinks not resolved): the
   * root it starts from and the rest. A path that leaves every root as written is canonicalised
   * once to find the root it reaches (a root given through a symlinked folder). What it names is
   * then opened by walking from the root's descriptor (see `confined/walk.ts`), which follows no
   * symlink without placing its target here again. `shownAs` is the name used in refusals.
   */
  place(input: string, mode: AccessMode, shownAs: string = input): ResolvedPath | RefusedPath {
    const expanded = this.expand(input);
    if (typeof expanded !== 'string') return expanded;
    const abs = path.resolve(this.root, expanded);
    const roots = this.roots(mode);
    if (this.protectedFiles.has(abs) || roots.some((r) => isInside(r, abs))) return this.check(abs, mode, shownAs);
    return this.check(canonicalise(abs), mode, shownAs);
  }

  /** The roots of a mode: write roots, or every root for reading. */
  roots(mode: AccessMode): readonly string[] {
    return mode === 'write' ? this.writeRoots : this.readRoots;
  }

  /** Absolute paths of switchboard's own files (for the checks made on an opened descriptor). */
  protectedPaths(): string[] {
    return [...this.protectedFiles.keys()];
  }

  private expand(input: string): string | RefusedPath {
    if (typeof input !== 'string' || input.length === 0) return { ok: false, reason: 'empty path' };
    if (input.includes('\0')) return { ok: false, reason: `${JSON.stringify(input)}: path contains a NUL byte` };
    return input.startsWith('~') ? input.replace(/^~/, process.env.HOME ?? '~') : input;
  }

  /**
   * The policy's verdict on an absolute path: not one of switchboard's files, inside a root of
   * the mode, not denied. `shownAs` names it in the refusal.
   */
  check(abs: string, mode: AccessMode, shownAs: string): ResolvedPath | RefusedPath {
    const what = this.protectedFiles.get(abs);
    if (what) return { ok: false, reason: `${shownAs}: ${what}; no tool may read or change it` };
    const root = this.roots(mode).find((r) => isInside(r, abs));
    if (!root) {
      const where = mode === 'write' ? 'the writable roots' : 'the workspace';
      return { ok: false, reason: `${shownAs}: outside ${where} (${this.root})` };
    }
    if (this.isHidden(abs)) return { ok: false, reason: `${shownAs}: another conversation's upload; not visible here` };
    const rel = path.relative(root, abs) || '.';
    if (rel !== '.' && this.isDenied(rel)) {
      return { ok: false, reason: `${shownAs}: matches a deny rule (${this.denyGlobs.join(', ')})` };
    }
    return { ok: true, abs, rel, root };
  }

  /** Display form of an absolute path: workspace-relative when inside it. */
  display(abs: string): string {
    return isInside(this.root, abs) ? path.relative(this.root, abs) || '.' : abs;
  }
}
