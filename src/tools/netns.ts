/**
 * One network namespace for sandboxed commands, held open by a small holder process (`cat`
 * reading a pipe from switchboard: it ends when switchboard does, even on SIGKILL) and entered by
 * each command with `nsenter`. In `egress` mode slirp4netns gives it user-mode networking (a tap
 * device whose traffic slirp4netns replays as ordinary sockets of the host) and, set from outside
 * before any command runs, routing rules refuse the host's own addresses, private, shared and
 * link-local ranges; slirp4netns's `--disable-host-loopback` refuses its gateway's way to the
 * host's 127.0.0.1. A command inside has no capability in the namespace, so it cannot change them.
 *
 * As root the namespace is owned by the initial user namespace; otherwise the holder makes its
 * own user namespace (mapping switchboard's user to root there) and commands enter both.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import type { Readable } from 'node:stream';

/** What a namespace offers: the internet without the host, or loopback only. */
export type NamespaceKind = 'egress' | 'none';

/** slirp4netns's network: its gateway, DNS forwarder and the address it gives the namespace. */
export const SLIRP = { cidr: '10.0.2.0/24', gateway: '10.0.2.2', dns: '10.0.2.3', guest: '10.0.2.100' } as const;

/**
 * IPv4 ranges a command must not reach in `egress` mode: "this network", private (RFC 1918),
 * shared address space (carrier-grade NAT, also tailnets), loopback, link-local (cloud metadata
 * at 169.254.169.254), multicast and reserved. slirp4netns has no IPv6 here, so no IPv6 address
 * is reachable at all.
 */
export const REFUSED_RANGES = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '224.0.0.0/4',
  '240.0.0.0/4',
] as const;

/** The host's own IPv4 addresses (a service listening on all addresses answers on each). */
export function hostAddresses(): string[] {
  const found = new Set<string>();
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4') found.add(a.address);
  return [...found].sort();
}

/**
 * The `ip -batch` lines that set up a namespace: loopback up, and in `egress` mode the rules. The
 * local table comes first (the namespace's own addresses, its loopback included, stay reachable);
 * then DNS to slirp4netns's forwarder, port 53 only (on any other port that address leads to the
 * host's resolver); then the refused ranges and host addresses, which answer "Permission denied".
 */
export function namespaceSetup(kind: NamespaceKind, hostAddrs: string[]): string[] {
  const lines = ['link set lo up'];
  if (kind === 'none') return lines;
  for (const proto of ['udp', 'tcp'])
    lines.push(`rule add to ${SLIRP.dns}/32 ipproto ${proto} dport 53 lookup main pref 100`);
  for (const range of REFUSED_RANGES) lines.push(`rule add to ${range} prohibit pref 200`);
  for (const addr of hostAddrs) lines.push(`rule add to ${addr}/32 prohibit pref 200`);
  return lines;
}

/** A namespace being held. */
export interface HeldNamespace {
  kind: NamespaceKind;
  /** The holder's PID (its /proc/PID/ns/net is the namespace). */
  pid: number;
  /** Whether the holder still runs. */
  alive(): boolean;
  /** `nsenter … --` that runs what follows in the namespace. */
  enter(): string[];
  /** Stop slirp4netns and the holder; resolves once both are gone. */
  close(): Promise<void>;
}

const READY_TIMEOUT_MS = 10_000;

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

/** Collects a child's stderr for an error message (bounded). */
function collect(stream: Readable | null | undefined): () => string {
  let text = '';
  stream?.on('data', (c: Buffer) => {
    if (text.length < 4000) text += c.toString('utf8');
  });
  return () => text.trim().replace(/\s+/g, ' ');
}

/** Resolves once `stream` yields data; rejects when `child` exits first or the time is up. */
function firstData(stream: Readable | null | undefined, child: ChildProcess, what: string, why: () => string) {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => done(new Error(`${what} did not get ready in ${READY_TIMEOUT_MS / 1000} s`)),
      READY_TIMEOUT_MS,
    );
    const onData = () => done();
    const onExit = (code: number | null, signal: string | null) =>
      done(new Error(`${what} exited (${signal ?? `code ${code}`})${why() ? `: ${why()}` : ''}`));
    const onError = (err: Error) => done(new Error(`${what} did not start: ${err.message}`));
    function done(err?: Error) {
      clearTimeout(timer);
      stream?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
      if (err) reject(err);
      else resolve();
    }
    stream?.once('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

/** Run `ip -batch -` in the namespace with `lines`. */
function runIp(enter: string[], lines: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const [file, ...args] = [...enter, 'ip', '-batch', '-'];
    const child = spawn(file as string, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    const stderr = collect(child.stderr);
    child.once('error', (err) => reject(new Error(`cannot run ip: ${err.message}`)));
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`setting up the namespace failed: ${stderr() || `ip exited ${code}`}`)),
    );
    child.stdin.end(`${lines.join('\n')}\n`);
  });
}

/**
 * Make a namespace and hold it. Throws with the reason when a helper is missing or fails (no
 * process is left behind then).
 */
export async function holdNamespace(kind: NamespaceKind): Promise<HeldNamespace> {
  const root = process.getuid?.() === 0;
  // The holder writes a line once it is in its namespaces, then waits for its stdin to close.
  const holder = spawn(
    'unshare',
    [...(root ? [] : ['--user', '--map-root-user']), '--net', '--', 'sh', '-c', 'echo ready && exec cat >/dev/null'],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const holderErr = collect(holder.stderr);
  let slirp: ChildProcess | undefined;
  const pid = holder.pid ?? -1;
  const enter = (): string[] => [
    'nsenter',
    ...(root ? [] : [`--user=/proc/${pid}/ns/user`, '--preserve-credentials']),
    `--net=/proc/${pid}/ns/net`,
    '--',
  ];
  const close = async () => {
    if (slirp) {
      slirp.kill('SIGTERM');
      await exited(slirp);
    }
    holder.stdin?.destroy();
    holder.kill('SIGKILL');
    await exited(holder);
  };
  try {
    await firstData(holder.stdout, holder, 'the namespace holder (unshare)', holderErr);
    if (kind === 'egress') {
      // fd 3: slirp4netns ends when it closes (when switchboard ends); fd 4: it writes there once
      // the tap device is up with its address and default route.
      slirp = spawn(
        'slirp4netns',
        [
          '--configure',
          '--mtu=65520',
          '--disable-host-loopback',
          '--enable-sandbox',
          '--enable-seccomp',
          `--cidr=${SLIRP.cidr}`,
          '--exit-fd=3',
          '--ready-fd=4',
          ...(root ? [] : [`--userns-path=/proc/${pid}/ns/user`]),
          String(pid),
          'tap0',
        ],
        { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
      );
      const slirpErr = collect(slirp.stderr);
      await firstData(slirp.stdio[4] as Readable, slirp, 'slirp4netns', slirpErr);
    }
    // Rules after slirp4netns configured the tap device: its default route must be added
    // before 10.0.0.0/8 (the gateway's range) is refused.
    await runIp(enter(), namespaceSetup(kind, hostAddresses()));
  } catch (err) {
    await close();
    throw err;
  }
  return {
    kind,
    pid,
    alive: () => holder.exitCode === null && holder.signalCode === null,
    enter,
    close,
  };
}
