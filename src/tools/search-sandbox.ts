/**
 * Where `search` runs ripgrep over a folder: in a bubblewrap sandbox of its own whose filesystem
 * holds the system's program folders (read-only, so rg can run) and one allowed root, mounted
 * from a directory descriptor the confined walk opened and checked — no path of it is resolved
 * again. rg walks by path; inside this sandbox a symlink swapped in by another process can only
 * lead to what the sandbox holds: the root (with switchboard's own files in it covered by
 * /dev/null, as the shell's sandbox covers them) and the program folders. No network, no other
 * namespace shared, no capabilities.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, lstatSync, openSync, closeSync, readlinkSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isInside } from './path-policy.js';

/** Folders rg needs to run (its binary, the loader, libraries); mounted read-only where they exist. */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc/ld.so.cache'];

/** The descriptor number the root is handed to bubblewrap as (after stdin, stdout, stderr). */
export const ROOT_FD = 3;

/** Where rg is, as an absolute path (the first on PATH), or undefined. */
export function ripgrepPath(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, 'rg');
    try {
      accessSync(candidate, constants.X_OK);
      return realpathSync(candidate);
    } catch {
      // not here
    }
  }
  return undefined;
}

function systemMounts(rg: string): string[] {
  const args: string[] = [];
  const bound: string[] = [];
  for (const p of SYSTEM_PATHS) {
    let st: import('node:fs').Stats;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    // Merged-/usr systems have /bin → usr/bin: recreate the link, do not mount its target twice.
    if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(p), p);
    else {
      args.push('--ro-bind', p, p);
      bound.push(p);
    }
  }
  // rg installed elsewhere (/opt, a home folder): its own folder too.
  const dir = path.dirname(rg);
  if (!bound.some((b) => isInside(b, dir))) args.push('--ro-bind', dir, dir);
  return args;
}

/**
 * The bubblewrap command line running `rg` with `rgArgs` over `root`, whose directory descriptor
 * the caller passes as descriptor {@link ROOT_FD}; `cover` lists files inside the root to show as
 * empty (switchboard's own files) and `hide` folders inside it to cover with an empty tmpfs (other
 * conversations' uploads), so a folder swapped in while rg walks cannot lead into them either.
 */
export function sandboxedRg(
  rg: string,
  root: string,
  cover: string[],
  rgArgs: string[],
  hide: string[] = [],
): string[] {
  const args = [
    '--die-with-parent',
    '--cap-drop',
    'ALL',
    '--unshare-all',
    '--new-session',
    ...systemMounts(rg),
    '--ro-bind-fd',
    String(ROOT_FD),
    root,
  ];
  for (const f of cover) if (isInside(root, f) && f !== root && existsSync(f)) args.push('--ro-bind', '/dev/null', f);
  for (const d of hide) if (isInside(root, d) && d !== root) args.push('--tmpfs', d);
  args.push('--chdir', root, rg, ...rgArgs);
  return args;
}

let probe: boolean | undefined;

/**
 * Whether this machine can run rg in that sandbox (bubblewrap installed, allowed to make
 * namespaces, new enough for `--ro-bind-fd`); probed once per process.
 */
export function rgSandboxWorks(): boolean {
  if (probe !== undefined) return probe;
  const rg = ripgrepPath();
  if (!rg) {
    probe = false;
    return probe;
  }
  const dir = os.tmpdir();
  let fd: number | undefined;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    const r = spawnSync('bwrap', sandboxedRg(rg, realpathSync(dir), [], ['--version']), {
      stdio: ['ignore', 'pipe', 'pipe', fd],
      timeout: 10_000,
    });
    probe = r.status === 0;
  } catch {
    probe = false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return probe;
}

/** For tests: forget the probe. */
export function resetRgSandboxProbe(): void {
  probe = undefined;
}
