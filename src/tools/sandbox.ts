/**
 * Where shell commands (`bash`, background processes) run. Every command gets a clean
 * environment: PATH, HOME, LANG, TERM, a few non-interactive settings and what
 * `tools.bash.env` passes on purpose — never switchboard's own variables. With bubblewrap
 * (`tools.bash.sandbox = "auto"` where it works, or `"bwrap"`), the command also runs in its own
 * PID, IPC and UTS namespaces (so /proc shows no switchboard process) with no capabilities, sees the filesystem
 * read-only except the workspace and the extra write roots, and does not see switchboard's
 * working folder, data folder, configuration file, database, the home folder or /run/secrets
 * (`workspace.extra_read_roots` shows a folder again, read-only), nor other conversations' uploads.
 * The network is not cut off (package managers and git need it); see docs/security.md.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import type { Config } from '../config.js';
import { canonicalise, isInside, type SandboxView } from './path-policy.js';
import { dataFolder, protectedFiles } from './protected-paths.js';

/** How commands run: in bubblewrap, or as plain child processes with a clean environment. */
export type SandboxMode = 'bwrap' | 'env';

/** The sandbox in force for a configuration, in words for `doctor` and the start-up log. */
export interface SandboxStatus {
  setting: Config['tools']['bash']['sandbox'];
  /** What commands get; null when `bwrap` was asked for and cannot run (commands are refused). */
  mode: SandboxMode | null;
  detail: string;
}

/** What to spawn for one command. */
export interface Launch {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

let probe: { ok: boolean; detail: string } | undefined;

/**
 * Whether bubblewrap can make the namespaces the sandbox needs here (containers may forbid
 * them); probed once per process.
 */
export function bwrapWorks(): { ok: boolean; detail: string } {
  if (probe) return probe;
  const version = spawnSync('bwrap', ['--version'], { encoding: 'utf8', timeout: 10_000 });
  if (version.error || version.status !== 0) {
    probe = { ok: false, detail: 'bubblewrap (bwrap) is not installed' };
    return probe;
  }
  const args = [
    '--unshare-pid',
    '--die-with-parent',
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/',
    '/',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    'true',
  ];
  const run = spawnSync('bwrap', args, { encoding: 'utf8', timeout: 10_000 });
  const name = version.stdout.trim() || 'bwrap';
  probe =
    run.status === 0
      ? { ok: true, detail: name }
      : {
          ok: false,
          detail: `${name} cannot create namespaces here: ${(run.stderr || run.error?.message || `exit ${run.status}`).trim()}`,
        };
  return probe;
}

/** The sandbox a configuration gets on this machine. */
export function sandboxStatus(config: Config): SandboxStatus {
  const setting = config.tools.bash.sandbox;
  if (setting === 'off') {
    return {
      setting,
      mode: 'env',
      detail: 'off (tools.bash.sandbox): commands get a clean environment only and can read what switchboard can',
    };
  }
  const bwrap = bwrapWorks();
  if (bwrap.ok)
    return {
      setting,
      mode: 'bwrap',
      detail: `bubblewrap (${bwrap.detail}): own PID namespace, clean environment, only the workspace writable, switchboard's files hidden`,
    };
  if (setting === 'bwrap')
    return {
      setting,
      mode: null,
      detail: `tools.bash.sandbox = "bwrap" but ${bwrap.detail}; shell commands are refused`,
    };
  return {
    setting,
    mode: 'env',
    detail: `${bwrap.detail}; commands get a clean environment only and can read what switchboard can`,
  };
}

/** The environment every command gets; nothing of switchboard's own environment but PATH and LANG. */
export function commandEnv(config: Config, home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH || DEFAULT_PATH,
    HOME: home,
    LANG: process.env.LANG || 'C.UTF-8',
    TERM: 'dumb',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    // Nobody can answer a prompt: fail fast instead of waiting for the timeout.
    GIT_TERMINAL_PROMPT: '0',
    DEBIAN_FRONTEND: 'noninteractive',
    ...config.tools.bash.env,
  };
}

/** One mount of the sandbox, in order: later ones cover earlier ones. */
type Mount = { kind: 'tmpfs' | 'bind' | 'ro-bind'; target: string };

/** Whether `p` is visible (not under a later tmpfs) after `mounts`. */
function visible(mounts: Mount[], p: string): boolean {
  let shown = true;
  for (const m of mounts) if (isInside(m.target, p)) shown = m.kind !== 'tmpfs';
  return shown;
}

/**
 * The bubblewrap arguments for a configuration (without the command). Folders to hide get an
 * empty tmpfs unless they hold a root the command needs (then only the files in them are
 * covered); switchboard's files still visible after that are covered by /dev/null. `view`: what
 * this conversation does not see (other conversations' uploads): covered last, with its own
 * folders shown again inside (they must exist).
 */
export function bwrapArgs(config: Config, cwd: string, view?: SandboxView): string[] {
  const writable = [config.workspace.root, ...config.workspace.extra_write_roots]
    .map(canonicalise)
    .filter((p) => existsSync(p));
  const readable = config.workspace.extra_read_roots.map(canonicalise).filter((p) => existsSync(p));
  const roots = [...writable, ...readable];
  const hide = [os.homedir(), process.cwd(), dataFolder(config), '/run/secrets']
    .filter((p): p is string => typeof p === 'string' && p !== '/' && existsSync(p))
    .map(canonicalise)
    // A folder that is a root cannot be hidden; the files of switchboard in it are covered below.
    .filter((dir) => !roots.includes(dir));
  const insideRoot = (dir: string) => roots.some((r) => isInside(r, dir));
  // A hidden folder that holds a root is mounted first (the root's bind shows it again); one
  // inside a root after the roots (or the bind would show it).
  const mounts: Mount[] = [{ kind: 'tmpfs', target: '/tmp' }];
  for (const target of hide.filter((d) => !insideRoot(d))) mounts.push({ kind: 'tmpfs', target });
  for (const r of writable) mounts.push({ kind: 'bind', target: r });
  for (const r of readable) mounts.push({ kind: 'ro-bind', target: r });
  for (const target of hide.filter(insideRoot)) mounts.push({ kind: 'tmpfs', target });
  for (const target of view?.hide ?? []) mounts.push({ kind: 'tmpfs', target });
  for (const target of (view?.show ?? []).filter((p) => existsSync(p))) mounts.push({ kind: 'bind', target });
  const args = [
    '--die-with-parent',
    // Run as root, bubblewrap keeps every capability unless told: a command could then unmount
    // what hides switchboard's files, or remount the filesystem writable.
    '--cap-drop',
    'ALL',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
  ];
  for (const m of mounts) {
    if (m.kind === 'tmpfs') args.push('--tmpfs', m.target);
    else args.push(m.kind === 'bind' ? '--bind' : '--ro-bind', m.target, m.target);
  }
  for (const f of protectedFiles(config)) {
    if (existsSync(f.abs) && visible(mounts, f.abs)) args.push('--ro-bind', '/dev/null', f.abs);
  }
  args.push('--chdir', cwd);
  return args;
}

/**
 * What to spawn for `bash -c command` in `cwd` under the configuration's sandbox; `view` is what
 * the conversation does not see (bubblewrap only: without it a command reads what switchboard can).
 * @returns a string saying why not when `bwrap` was asked for and cannot run.
 */
export function commandLaunch(config: Config, command: string, cwd: string, view?: SandboxView): Launch | string {
  const status = sandboxStatus(config);
  if (status.mode === null) return status.detail;
  // In bubblewrap HOME is an empty tmpfs (the real home is hidden); without it, the real home.
  const env = commandEnv(config, os.homedir());
  if (status.mode === 'env') return { file: 'bash', args: ['-c', command], env };
  return { file: 'bwrap', args: [...bwrapArgs(config, cwd, view), 'bash', '-c', command], env };
}

/** For tests: forget the probe (a test may change PATH). */
export function resetSandboxProbe(): void {
  probe = undefined;
}
