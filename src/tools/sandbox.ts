/**
 * Where shell commands (`bash`, background processes) run. Every command gets a clean
 * environment: PATH, HOME, LANG, TERM, a few non-interactive settings and what
 * `tools.bash.env` passes on purpose — never switchboard's own variables — and the limits of
 * `sandbox-limits.ts`. With bubblewrap (`tools.bash.sandbox = "auto"` where it works, or
 * `"bwrap"`), the command also runs in its own PID, IPC and UTS namespaces (so /proc shows no
 * switchboard process) with no capabilities, sees the filesystem read-only except the workspace
 * and the extra write roots, and does not see switchboard's working folder, data folder,
 * configuration file, database, the home folder or /run/secrets (`workspace.extra_read_roots`
 * shows a folder again, read-only); and its network is its conversation's namespace
 * (`sandbox-network.ts`, `tools.bash.network`). See docs/security.md.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import os from 'node:os';
import type { Config } from '../config.js';
import { type CommandCgroup, openCommandCgroup } from './cgroups.js';
import { SLIRP } from './netns.js';
import { canonicalise, isInside, type SandboxView } from './path-policy.js';
import { dataFolder, protectedFiles } from './protected-paths.js';
import { limitPlan, resetPrlimitProbe, runsAsRoot } from './sandbox-limits.js';
import { joinNamespace, type NamespaceLease, networkStatus } from './sandbox-network.js';

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
  /** Text the command's file descriptor 3 reads (bubblewrap makes a file of it); none when unset. */
  fd3?: string;
}

/** A command ready to spawn, and what to do once it ended. */
export interface PreparedCommand extends Launch {
  /** What a limit stopped ("the memory limit (1024 MiB) killed 1 process"); read after the command ended. */
  limitNotes(): string[];
  /** Leave the conversation's network namespace and remove the command's cgroup, once its processes are gone. */
  release(): Promise<void>;
}

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

type BwrapProbe = { ok: boolean; detail: string; sizedTmpfs: boolean };

let probe: BwrapProbe | undefined;
/** The probe running in the background ({@link probeBwrapInBackground}), if one was started. */
let probing: Promise<BwrapProbe> | undefined;

/** What a probe command did: its exit status (null when it did not run), output and spawn error. */
interface ProbeRun {
  status: number | null;
  stdout: string;
  stderr: string;
  error?: Error;
}

const PROBE_OPTIONS = { encoding: 'utf8', timeout: 10_000 } as const;
const VERSION_ARGS = ['--version'];
const RUN_ARGS = [
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
const HELP_ARGS = ['--help'];

function syncRun(args: string[]): ProbeRun {
  const r = spawnSync('bwrap', args, PROBE_OPTIONS);
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', ...(r.error ? { error: r.error } : {}) };
}

function asyncRun(args: string[]): Promise<ProbeRun> {
  return new Promise((resolve) => {
    execFile('bwrap', args, PROBE_OPTIONS, (error, stdout, stderr) => {
      const code = (error as { code?: unknown } | null)?.code;
      // execFile reports a non-zero exit as an error with a numeric code; a spawn failure has a string code.
      if (error && typeof code !== 'number') resolve({ status: null, stdout, stderr, error });
      else resolve({ status: error ? (code as number) : 0, stdout, stderr });
    });
  });
}

const NOT_INSTALLED: BwrapProbe = { ok: false, detail: 'bubblewrap (bwrap) is not installed', sizedTmpfs: false };

const installed = (version: ProbeRun) => !version.error && version.status === 0;

/** The probe's verdict from `bwrap --version` (it ran), a namespaced `true`, and `bwrap --help`. */
function verdict(version: ProbeRun, run: ProbeRun, help: ProbeRun): BwrapProbe {
  const name = version.stdout.trim() || 'bwrap';
  // `--size` (a tmpfs's size) came with bubblewrap 0.7.
  const sizedTmpfs = /--size\b/.test(`${help.stdout}${help.stderr}`);
  return run.status === 0
    ? { ok: true, detail: name, sizedTmpfs }
    : {
        ok: false,
        detail: `${name} cannot create namespaces here: ${(run.stderr || run.error?.message || `exit ${run.status}`).trim()}`,
        sizedTmpfs,
      };
}

/**
 * Whether bubblewrap can make the namespaces the sandbox needs here (containers may forbid
 * them); probed once per process.
 */
export function bwrapWorks(): BwrapProbe {
  if (probe) return probe;
  const version = syncRun(VERSION_ARGS);
  probe = installed(version) ? verdict(version, syncRun(RUN_ARGS), syncRun(HELP_ARGS)) : NOT_INSTALLED;
  return probe;
}

/**
 * Run {@link bwrapWorks}'s probe without blocking the event loop, so that its three `bwrap`
 * child processes do not hold up what start-up does meanwhile (the first poll); a later
 * `bwrapWorks()` answers from it. Resolves once the probe is known.
 */
export function probeBwrapInBackground(): Promise<BwrapProbe> {
  if (probe) return Promise.resolve(probe);
  probing ??= asyncRun(VERSION_ARGS)
    .then(async (version) =>
      installed(version)
        ? verdict(version, ...(await Promise.all([asyncRun(RUN_ARGS), asyncRun(HELP_ARGS)])))
        : NOT_INSTALLED,
    )
    .then((p) => {
      probe ??= p;
      return probe;
    });
  return probing;
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
    // Not root: a user namespace of the command's own, so RLIMIT_NPROC counts its processes only
    // (in a conversation's network namespace, bubblewrap would otherwise share the holder's), in
    // which the command has switchboard's uid and gid (it is root in the holder's namespace).
    ...(runsAsRoot()
      ? []
      : ['--unshare-user', '--uid', String(process.getuid?.() ?? 0), '--gid', String(process.getgid?.() ?? 0)]),
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
  // A tmpfs is memory: a command writing to /tmp or its home may not hold more than its memory limit there.
  const memory = config.tools.bash.max_memory_mb;
  const size = memory > 0 && bwrapWorks().sizedTmpfs ? ['--size', String(memory * 1024 * 1024)] : [];
  for (const m of mounts) {
    if (m.kind === 'tmpfs') args.push(...size, '--tmpfs', m.target);
    else args.push(m.kind === 'bind' ? '--bind' : '--ro-bind', m.target, m.target);
  }
  for (const f of protectedFiles(config)) {
    if (existsSync(f.abs) && visible(mounts, f.abs)) args.push('--ro-bind', '/dev/null', f.abs);
  }
  args.push('--chdir', cwd);
  return args;
}

/** Whether /etc/resolv.conf is there to be covered (a bind needs an existing target in a read-only root). */
function hasResolvConf(): boolean {
  try {
    return statSync('/etc/resolv.conf').isFile();
  } catch {
    return false;
  }
}

/**
 * The first process of a command with a cgroup: it moves itself into each `cgroup.procs` given
 * before `--`, then becomes the rest, so nothing the command starts is outside the cgroup.
 */
const JOIN_CGROUP = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

/**
 * What to spawn for `bash -c command` in `cwd` under the configuration's sandbox, network and
 * limits; the command's network namespace is its conversation's, and `view` is what of the uploads
 * it does not see (bubblewrap only: without it a command reads what switchboard can).
 * @returns a string saying why not (`bwrap` asked for and not working, a namespace or cgroup that
 *   cannot be made): a command never runs with less isolation than configured.
 */
export async function prepareCommand(
  config: Config,
  command: string,
  cwd: string,
  conversationId: string,
  view?: SandboxView,
): Promise<PreparedCommand | string> {
  const status = sandboxStatus(config);
  if (status.mode === null) return status.detail;
  // In bubblewrap HOME is an empty tmpfs (the real home is hidden); without it, the real home.
  const env = commandEnv(config, os.homedir());
  const inBwrap = status.mode === 'bwrap';
  const plan = limitPlan(config, inBwrap);
  let lease: NamespaceLease | undefined;
  let argv: string[];
  let fd3: string | undefined;
  if (!inBwrap) argv = [...plan.rlimits, 'bash', '-c', command];
  else {
    const net = await networkStatus(config, true);
    const netArgs: string[] = [];
    if (net.mode !== 'host' && net.shared) {
      try {
        lease = await joinNamespace(net.mode, conversationId);
      } catch (err) {
        return `the command's network namespace (tools.bash.network = "${net.mode}") cannot be set up: ${(err as Error).message}`;
      }
    } else if (net.mode !== 'host') netArgs.push('--unshare-net');
    // The host's resolver may be on its loopback or a private address, which the namespace
    // refuses: DNS goes to slirp4netns's forwarder. bubblewrap reads the file from fd 3 (and closes it).
    if (net.mode === 'egress' && hasResolvConf()) {
      netArgs.push('--ro-bind-data', '3', '/etc/resolv.conf');
      fd3 = `nameserver ${SLIRP.dns}\n`;
    }
    argv = [
      ...(lease?.enter ?? []),
      'bwrap',
      ...bwrapArgs(config, cwd, view),
      ...netArgs,
      ...plan.rlimits,
      'bash',
      '-c',
      command,
    ];
  }
  let cgroup: CommandCgroup | null;
  try {
    cgroup = openCommandCgroup({ processes: plan.limits.processes, memoryBytes: plan.limits.memoryBytes });
  } catch (err) {
    lease?.leave();
    return (err as Error).message;
  }
  if (cgroup) argv = ['/bin/sh', '-c', JOIN_CGROUP, 'sh', ...cgroup.procsFiles, '--', ...argv];
  const [file = 'bash', ...args] = argv;
  let released = false;
  return {
    file,
    args,
    env,
    ...(fd3 === undefined ? {} : { fd3 }),
    limitNotes: () => cgroup?.notes() ?? [],
    async release() {
      if (released) return;
      released = true;
      lease?.leave();
      await cgroup?.remove();
    },
  };
}

/** For tests: forget the probes (a test may change PATH). */
export function resetSandboxProbe(): void {
  probe = undefined;
  probing = undefined;
  resetPrlimitProbe();
}
