/**
 * What one shell command may consume: processes, memory, file size and CPU time
 * (`tools.bash.max_*`; the whole command's wall time is its timeout). Two layers:
 *
 * - a cgroup per command (`cgroups.ts`) for processes (`pids.max`) and memory, where switchboard
 *   can make one — it binds root too;
 * - rlimits set by `prlimit` right before the command: RLIMIT_FSIZE and RLIMIT_CPU always,
 *   RLIMIT_NPROC in bubblewrap (the command has its own user namespace there, so the count is the
 *   command's own processes; the kernel does not apply it to root), and RLIMIT_AS as the memory
 *   limit where no memory cgroup can be made.
 */
import { execFile, spawnSync } from 'node:child_process';
import type { Config } from '../config.js';
import { type CgroupSupport, cgroupSupport } from './cgroups.js';

/** What one command may consume; 0 = no limit. */
export interface CommandLimits {
  processes: number;
  memoryBytes: number;
  fileSizeBytes: number;
  cpuSeconds: number;
}

const MIB = 1024 * 1024;

/** The limits of a configuration. */
export function commandLimits(config: Config): CommandLimits {
  const b = config.tools.bash;
  return {
    processes: b.max_processes,
    memoryBytes: b.max_memory_mb * MIB,
    fileSizeBytes: b.max_file_size_mb * MIB,
    cpuSeconds: b.max_cpu_seconds,
  };
}

let prlimitProbe: boolean | undefined;

/** Whether util-linux's `prlimit` runs here (probed once). */
export function prlimitWorks(): boolean {
  if (prlimitProbe === undefined) {
    const r = spawnSync('prlimit', ['--version'], { stdio: 'ignore', timeout: 10_000 });
    prlimitProbe = r.status === 0;
  }
  return prlimitProbe;
}

/**
 * Probe {@link prlimitWorks} without blocking the event loop (start-up runs it while the channels
 * make their first requests); a later `prlimitWorks()` answers from it.
 */
export function probePrlimitInBackground(): Promise<boolean> {
  if (prlimitProbe !== undefined) return Promise.resolve(prlimitProbe);
  return new Promise((resolve) => {
    execFile('prlimit', ['--version'], { timeout: 10_000 }, (error) => {
      prlimitProbe ??= error === null;
      resolve(prlimitProbe);
    });
  });
}

/** For tests: forget whether prlimit runs (a test may change PATH). */
export function resetPrlimitProbe(): void {
  prlimitProbe = undefined;
}

/** Whether switchboard runs as root (RLIMIT_NPROC does not bind root). */
export function runsAsRoot(): boolean {
  return process.getuid?.() === 0;
}

/** How the limits are enforced for one command. */
export interface LimitPlan {
  limits: CommandLimits;
  /** `prlimit … --` to put right before `bash -c`, or [] when no rlimit is set. */
  rlimits: string[];
  /** Limits set in the configuration that nothing enforces here, with why. */
  unbound: string[];
  /** How each limit binds, in words. */
  layers: string[];
}

/**
 * How a configuration's limits bind here.
 * @param inBwrap the command runs in bubblewrap (its own user namespace unless switchboard is root)
 */
export function limitPlan(config: Config, inBwrap: boolean, cgroups: CgroupSupport = cgroupSupport()): LimitPlan {
  const limits = commandLimits(config);
  const rl: string[] = [];
  const unbound: string[] = [];
  const layers: string[] = [];
  const prlimit = prlimitWorks();
  const noPrlimit = 'prlimit (util-linux) is not installed';
  if (limits.processes > 0) {
    if (cgroups.pids) layers.push(`${limits.processes} processes (cgroup pids.max)`);
    if (inBwrap && !runsAsRoot() && prlimit) {
      rl.push(`--nproc=${limits.processes}`);
      if (!cgroups.pids) layers.push(`${limits.processes} processes (RLIMIT_NPROC in the command's user namespace)`);
    } else if (!cgroups.pids) {
      const why = !inBwrap
        ? 'without bubblewrap RLIMIT_NPROC would count every process of switchboard’s user'
        : runsAsRoot()
          ? 'switchboard runs as root, which RLIMIT_NPROC does not bind'
          : noPrlimit;
      unbound.push(`processes: not limited (${why}, and no cgroup can be made here)`);
    }
  }
  if (limits.memoryBytes > 0) {
    if (cgroups.memory) layers.push(`${limits.memoryBytes / MIB} MiB memory (cgroup)`);
    else if (prlimit) {
      rl.push(`--as=${limits.memoryBytes}`);
      layers.push(`${limits.memoryBytes / MIB} MiB address space per process (RLIMIT_AS; no memory cgroup here)`);
    } else unbound.push(`memory: not limited (${noPrlimit}, and no cgroup can be made here)`);
  }
  if (limits.fileSizeBytes > 0) {
    if (prlimit) {
      rl.push(`--fsize=${limits.fileSizeBytes}`);
      layers.push(`${limits.fileSizeBytes / MIB} MiB per file (RLIMIT_FSIZE)`);
    } else unbound.push(`file size: not limited (${noPrlimit})`);
  }
  if (limits.cpuSeconds > 0) {
    if (prlimit) {
      rl.push(`--cpu=${limits.cpuSeconds}`);
      layers.push(`${limits.cpuSeconds} s CPU per process (RLIMIT_CPU)`);
    } else unbound.push(`CPU time: not limited (${noPrlimit})`);
  }
  return { limits, rlimits: rl.length ? ['prlimit', ...rl, '--'] : [], unbound, layers };
}
