/**
 * A cgroup per shell command, where switchboard may create one: `pids.max` caps how many
 * processes (and threads) the command runs at once and a memory limit caps what it may use, both
 * for the command and everything it starts. Unlike RLIMIT_NPROC, which the kernel does not apply
 * to root, a cgroup's limits bind whoever runs in it — and switchboard often runs as root (CI, a
 * server). cgroup v1 (separate `pids` and `memory` hierarchies) and v2 (one hierarchy with both
 * controllers delegated) are both used; where neither is writable (an unprivileged container)
 * there is no cgroup and the rlimits of `sandbox-limits.ts` are what binds.
 *
 * Layout: one folder per switchboard process, `switchboard-sandbox-<pid>`, next to or below
 * switchboard's own cgroup, and one `cmd-<n>` per running command inside it. Folders left by a
 * process that no longer runs are removed when the next one probes.
 */
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Where this process's command cgroups go, per controller; null where none can be made. */
export interface CgroupSupport {
  version: 1 | 2 | null;
  /** The folder holding the `pids` cgroups of commands. */
  pids: string | null;
  /** The folder holding the `memory` cgroups of commands. */
  memory: string | null;
  /** Why a controller is not available (empty when both are). */
  problems: string[];
}

/** One command's cgroup(s). */
export interface CommandCgroup {
  /** The `cgroup.procs` files the command's first process must write its PID to before it starts anything. */
  procsFiles: string[];
  /** What the limits stopped, in words ("the memory limit killed 1 process"); empty when nothing. */
  notes(): string[];
  /** Kill what is still in the cgroup and remove it. */
  remove(): Promise<void>;
}

/** A cgroup mount as /proc/self/mountinfo lists it. */
interface CgroupMount {
  version: 1 | 2;
  /** The controllers of a v1 hierarchy (empty for v2). */
  controllers: string[];
  /** The path of the cgroup tree this mount shows (its root), e.g. `/` or `/docker/abc`. */
  root: string;
  mountPoint: string;
}

const PREFIX = 'switchboard-sandbox-';

/** Parse /proc/self/mountinfo for cgroup mounts. */
export function cgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const fields = left.split(' ');
    const [fstype, , superOptions = ''] = right.split(' ');
    const root = unescapeMount(fields[3] ?? '/');
    const mountPoint = unescapeMount(fields[4] ?? '');
    if (fstype === 'cgroup2') mounts.push({ version: 2, controllers: [], root, mountPoint });
    else if (fstype === 'cgroup') mounts.push({ version: 1, controllers: superOptions.split(','), root, mountPoint });
  }
  return mounts;
}

/** mountinfo writes spaces, tabs, newlines and backslashes as octal escapes. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
}

/** Parse /proc/self/cgroup: the path of this process per v1 controller, and its v2 path (`''` key). */
export function ownCgroups(text: string): Map<string, string> {
  const own = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    const [, controllers = '', where = '/'] = m;
    if (controllers === '') own.set('', where);
    for (const c of controllers.split(',')) if (c) own.set(c, where);
  }
  return own;
}

/** The folder of cgroup `where` under `mount` (the mount may show a subtree only). */
function folderOf(mount: CgroupMount, where: string): string | null {
  const root = mount.root === '/' ? '' : mount.root;
  if (root && where !== root && !where.startsWith(`${root}/`)) return null;
  return path.join(mount.mountPoint, where.slice(root.length));
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Remove the folders left by switchboard processes that no longer run (only empty cgroups can go). */
function removeStale(parent: string): void {
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return;
  }
  for (const e of entries) {
    const pid = Number(e.startsWith(PREFIX) ? e.slice(PREFIX.length) : Number.NaN);
    if (!Number.isInteger(pid) || pid === process.pid || processAlive(pid)) continue;
    const base = path.join(parent, e);
    try {
      for (const child of readdirSync(base, { withFileTypes: true }))
        if (child.isDirectory()) rmdirSync(path.join(base, child.name));
      rmdirSync(base);
    } catch {
      // Still holds a process (or not ours to remove): leave it.
    }
  }
}

/**
 * Make this process's folder under `parent` and check that a command cgroup can be made in it
 * with `limitFile` written; returns the folder, or throws why not.
 */
function prepareBase(parent: string, version: 1 | 2, controllers: string[], limitFiles: string[]): string {
  removeStale(parent);
  const base = path.join(parent, `${PREFIX}${process.pid}`);
  mkdirSync(base, { recursive: true });
  if (version === 2)
    writeFileSync(path.join(base, 'cgroup.subtree_control'), controllers.map((c) => `+${c}`).join(' '));
  const probe = path.join(base, 'probe');
  mkdirSync(probe, { recursive: true });
  try {
    for (const f of limitFiles) writeFileSync(path.join(probe, f), UNLIMITED[f] ?? 'max');
  } finally {
    rmdirSync(probe);
  }
  return base;
}

/** How each limit file says "no limit". */
const UNLIMITED: Record<string, string> = {
  'pids.max': 'max',
  'memory.max': 'max',
  'memory.limit_in_bytes': '-1',
};

let support: CgroupSupport | undefined;

/** Where this process can make command cgroups; probed once (a folder is made and written to). */
export function cgroupSupport(): CgroupSupport {
  if (support) return support;
  const read = (file: string) => readFileSync(file, 'utf8');
  const problems: string[] = [];
  let mounts: CgroupMount[];
  let own: Map<string, string>;
  try {
    mounts = cgroupMounts(read('/proc/self/mountinfo'));
    own = ownCgroups(read('/proc/self/cgroup'));
  } catch (err) {
    support = { version: null, pids: null, memory: null, problems: [`cannot read /proc: ${(err as Error).message}`] };
    return support;
  }
  const v1 = (controller: string, files: string[]): string | null => {
    const mount = mounts.find((m) => m.version === 1 && m.controllers.includes(controller));
    const where = own.get(controller);
    if (!mount || where === undefined) return null;
    const parent = folderOf(mount, where);
    if (!parent) return null;
    try {
      return prepareBase(parent, 1, [controller], files);
    } catch (err) {
      problems.push(`cgroup v1 ${controller} at ${parent}: ${(err as Error).message}`);
      return null;
    }
  };
  const pids = v1('pids', ['pids.max']);
  const memory = v1('memory', ['memory.limit_in_bytes']);
  if (pids || memory) {
    support = { version: 1, pids, memory, problems };
    if (!pids) problems.push('no writable cgroup v1 pids hierarchy');
    if (!memory) problems.push('no writable cgroup v1 memory hierarchy');
    return support;
  }
  const mount2 = mounts.find((m) => m.version === 2);
  const where2 = own.get('');
  if (mount2 && where2 !== undefined) {
    const ownFolder = folderOf(mount2, where2);
    // Below our own cgroup where controllers can be given to children (the root, or a delegated
    // cgroup without processes of its own); else next to it, below its parent.
    const candidates = ownFolder ? [ownFolder, ...(where2 === '/' ? [] : [path.dirname(ownFolder)])] : [];
    for (const parent of candidates) {
      let available: string[];
      try {
        available = read(path.join(parent, 'cgroup.subtree_control')).trim().split(/\s+/);
      } catch {
        continue;
      }
      const wanted = ['pids', 'memory'].filter((c) => available.includes(c));
      if (wanted.length === 0) continue;
      try {
        const files = [
          ...(wanted.includes('pids') ? ['pids.max'] : []),
          ...(wanted.includes('memory') ? ['memory.max'] : []),
        ];
        const base = prepareBase(parent, 2, wanted, files);
        support = {
          version: 2,
          pids: wanted.includes('pids') ? base : null,
          memory: wanted.includes('memory') ? base : null,
          problems,
        };
        return support;
      } catch (err) {
        problems.push(`cgroup v2 at ${parent}: ${(err as Error).message}`);
      }
    }
    if (problems.length === 0)
      problems.push('no cgroup v2 folder with the pids and memory controllers given to children');
  } else if (problems.length === 0) problems.push('no cgroup hierarchy with the pids or memory controller is mounted');
  support = { version: null, pids: null, memory: null, problems };
  return support;
}

/** The limits a command cgroup sets; 0 = none. */
export interface CgroupLimits {
  processes: number;
  memoryBytes: number;
}

let seq = 0;
/** Command cgroups whose removal timed out (a process would not die): tried again at shutdown. */
const leftover = new Set<string>();

function readNumber(file: string, key: string): number {
  try {
    const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(readFileSync(file, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * A cgroup for one command with `limits`, or null when there is nothing to limit here (no
 * controller available, or no limit set). Throws when a cgroup should be made and cannot: a
 * command is never run without the limits it was meant to get.
 */
export function openCommandCgroup(limits: CgroupLimits, where: CgroupSupport = cgroupSupport()): CommandCgroup | null {
  const pidsBase = limits.processes > 0 ? where.pids : null;
  const memoryBase = limits.memoryBytes > 0 ? where.memory : null;
  if (!pidsBase && !memoryBase) return null;
  const name = `cmd-${process.pid}-${++seq}`;
  const dirs: string[] = [];
  const make = (base: string): string => {
    const dir = path.join(base, name);
    if (!dirs.includes(dir)) {
      mkdirSync(dir);
      dirs.push(dir);
    }
    return dir;
  };
  let pidsDir: string | null = null;
  let memoryDir: string | null = null;
  try {
    if (pidsBase) {
      pidsDir = make(pidsBase);
      writeFileSync(path.join(pidsDir, 'pids.max'), String(limits.processes));
    }
    if (memoryBase) {
      memoryDir = make(memoryBase);
      const bytes = String(limits.memoryBytes);
      if (where.version === 2) {
        writeFileSync(path.join(memoryDir, 'memory.max'), bytes);
        // Swap would let a command keep more than its limit.
        tryWrite(path.join(memoryDir, 'memory.swap.max'), '0');
      } else {
        writeFileSync(path.join(memoryDir, 'memory.limit_in_bytes'), bytes);
        tryWrite(path.join(memoryDir, 'memory.memsw.limit_in_bytes'), bytes);
      }
    }
  } catch (err) {
    for (const dir of dirs) void emptyAndRemove(dir);
    throw new Error(`cannot set up the command's cgroup: ${(err as Error).message}`);
  }
  return {
    procsFiles: dirs.map((d) => path.join(d, 'cgroup.procs')),
    notes() {
      const notes: string[] = [];
      const refused = pidsDir ? readNumber(path.join(pidsDir, 'pids.events'), 'max') : 0;
      if (refused > 0)
        notes.push(
          `the process limit (${limits.processes}) refused ${refused} new process${refused === 1 ? '' : 'es'}`,
        );
      const killed = memoryDir
        ? readNumber(path.join(memoryDir, where.version === 2 ? 'memory.events' : 'memory.oom_control'), 'oom_kill')
        : 0;
      if (killed > 0)
        notes.push(
          `the memory limit (${Math.round(limits.memoryBytes / 1048576)} MiB) killed ${killed} process${killed === 1 ? '' : 'es'}`,
        );
      return notes;
    },
    async remove() {
      await Promise.all(dirs.map((d) => emptyAndRemove(d)));
    },
  };
}

function tryWrite(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch {
    // Not there (no swap accounting): nothing to limit.
  }
}

/** Kill what is left in a command cgroup and remove it; gives up after 2 s (retried at shutdown). */
async function emptyAndRemove(dir: string): Promise<void> {
  const until = Date.now() + 2000;
  for (;;) {
    let members: number[] = [];
    try {
      members = readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      // Gone already.
    }
    for (const pid of members) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Exited meanwhile.
      }
    }
    try {
      rmdirSync(dir);
      leftover.delete(dir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        leftover.delete(dir);
        return;
      }
      if (Date.now() > until) {
        leftover.add(dir);
        return;
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Remove the command cgroups whose removal timed out, and this process's folders when no command
 * holds one any more; the core calls this on close.
 */
export async function closeCgroups(): Promise<void> {
  await Promise.all([...leftover].map((d) => emptyAndRemove(d)));
  if (!support) return;
  let removed = true;
  for (const base of new Set([support.pids, support.memory])) {
    if (!base) continue;
    try {
      rmdirSync(base);
    } catch (err) {
      // A command of another core of this process still runs (or a process would not die): the
      // folder stays, and the next start of switchboard removes it.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') removed = false;
    }
  }
  if (removed) support = undefined;
}
