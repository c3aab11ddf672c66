/**
 * Running shell commands in their own process group: `bash -c` (or bubblewrap running it, which
 * keeps the group) detached so it leads a new group, output merged and captured head+tail, complete lines handed to a callback, and a group
 * kill (SIGTERM, then SIGKILL after a grace period) that takes the command's children with it.
 * Background processes live in a registry until stopped or reaped at shutdown.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { HeadTail } from './output-cap.js';
import type { Launch } from './sandbox.js';

/** Time between SIGTERM and SIGKILL when stopping a group. */
export const KILL_GRACE_MS = 2000;

/** A running command. */
export interface RunningCommand {
  child: ChildProcess;
  pid: number;
  output: HeadTail;
  /** Resolves when the group leader exited and its output was drained. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Kill the whole group (TERM, then KILL after the grace period). */
  kill(): Promise<void>;
}

/** Options of {@link startCommand}. */
export interface StartOptions {
  /** What to spawn (`bash -c …`, maybe inside the sandbox) and its environment; see `sandbox.ts`. */
  launch: Launch;
  cwd: string;
  maxOutputBytes: number;
  /** Called with complete lines (joined with \n, no trailing newline) as they arrive. */
  onLines?(text: string): void;
}

/** Signal a whole process group; false when it no longer exists. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Live (non-zombie) members of a process group, read from /proc. A killed child whose parent
 * is gone may linger as a zombie when PID 1 does not reap; it holds no resources, so it does
 * not count. Null where /proc is not available.
 */
export function groupMembers(pgid: number): number[] | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  const live: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${e}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the parenthesised command name: state ppid pgrp ...
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(rest[2]) === pgid && rest[0] !== 'Z' && rest[0] !== 'X') live.push(Number(e));
  }
  return live;
}

/** How long processes of a group that are still exiting get before they count as left running, ms. */
export const EXIT_GRACE_MS = 250;

/**
 * Whether the group still has live processes once those in the middle of exiting had
 * {@link EXIT_GRACE_MS} to finish (on a loaded machine a child can outlive its leader by a moment).
 */
export async function groupLingers(pid: number, graceMs = EXIT_GRACE_MS): Promise<boolean> {
  const until = Date.now() + graceMs;
  while (groupAlive(pid)) {
    if (Date.now() >= until) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/** True while any live process of the group exists. */
export function groupAlive(pid: number): boolean {
  const members = groupMembers(pid);
  if (members) return members.length > 0;
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Start a command (see {@link StartOptions.launch}) as a new process group. */
export function startCommand(o: StartOptions): RunningCommand {
  const fd3 = o.launch.fd3;
  const child = spawn(o.launch.file, o.launch.args, {
    cwd: o.cwd,
    env: o.launch.env,
    detached: true,
    stdio: fd3 === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  if (fd3 !== undefined) {
    const data = child.stdio[3] as Writable;
    // A command that ended before reading it: nothing to deliver.
    data.on('error', () => {});
    data.end(fd3);
  }
  const output = new HeadTail(o.maxOutputBytes);
  let partial = '';
  const onData = (chunk: Buffer) => {
    output.push(chunk);
    if (!o.onLines) return;
    const text = partial + chunk.toString('utf8');
    const cut = text.lastIndexOf('\n');
    if (cut === -1) {
      // Keep a bounded partial line; a line with no newline for 64 KB is flushed as is.
      partial = text;
      if (partial.length > 65536) {
        o.onLines(partial);
        partial = '';
      }
      return;
    }
    o.onLines(text.slice(0, cut));
    partial = text.slice(cut + 1);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const pid = child.pid ?? -1;
  let exited = false;
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('error', () => {
      exited = true;
      resolve({ code: 127, signal: null });
    });
    child.on('exit', (code, signal) => {
      exited = true;
      // Output may still be in the pipes; wait for them to close, but not for ever (a child
      // that escaped the group could hold them open).
      const finish = () => {
        if (partial && o.onLines) o.onLines(partial);
        partial = '';
        resolve({ code, signal });
      };
      let pending = 2;
      const timer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, 500);
      const closed = () => {
        if (--pending === 0) {
          clearTimeout(timer);
          finish();
        }
      };
      if (child.stdout && !child.stdout.closed) child.stdout.once('close', closed);
      else closed();
      if (child.stderr && !child.stderr.closed) child.stderr.once('close', closed);
      else closed();
    });
  });
  const kill = async () => {
    if (pid <= 0) return;
    signalGroup(pid, 'SIGTERM');
    const deadline = Date.now() + KILL_GRACE_MS;
    let resent = Date.now();
    while (Date.now() < deadline && (groupAlive(pid) || !exited)) {
      await new Promise((r) => setTimeout(r, 50));
      // A sandboxed command still being set up misses the first signal (and the sandbox's init
      // ignores it): say it again now and then until the grace period is over.
      if (Date.now() - resent >= 250) {
        resent = Date.now();
        signalGroup(pid, 'SIGTERM');
      }
    }
    signalGroup(pid, 'SIGKILL');
    await done;
    // A sandbox's namespaces are torn down after its processes are killed: wait for that too.
    const gone = Date.now() + KILL_GRACE_MS;
    while (Date.now() < gone && groupAlive(pid)) await new Promise((r) => setTimeout(r, 20));
  };
  return { child, pid, output, done, kill };
}
