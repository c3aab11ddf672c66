/**
 * A stand-in for the internet and for a private network, for tests of the shell sandbox's
 * network (this machine has no internet): a network namespace of the test's own, joined to the
 * host by a veth pair, holding 198.51.100.1 (TEST-NET-2: not private, so the sandbox may reach
 * it), 10.123.0.1 (private) and 169.254.77.1 (link-local, where cloud metadata lives), with an
 * HTTP server on all three. The host reaches all three; a sandboxed command must reach the first
 * only. Building it needs root (or passwordless sudo); the server stops by itself after two
 * minutes, and {@link NetWorld.close} removes the namespace and the veth pair.
 *
 * The addresses are the host's routes, so one world exists at a time on a machine: runs of the
 * suite side by side (CI runs several) take turns through a lock folder held from the start of a
 * world to its close, and taken over from a holder whose process is gone.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The world's addresses, its server's port, and what the server answers. */
export interface NetWorld {
  internet: string;
  private: string;
  linkLocal: string;
  port: number;
  /** The server's answer body: `world <token>`. */
  answer: string;
  close(): Promise<void>;
}

/** `sudo -n` when not root; null when neither works. */
function privilege(): string[] | null {
  if (process.getuid?.() === 0) return [];
  const sudo = spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore', timeout: 10_000 });
  return sudo.status === 0 ? ['sudo', '-n'] : null;
}

/** Why the world cannot be built here, or undefined when it can. */
export function netWorldUnavailable(): string | undefined {
  return privilege() === null
    ? 'building the test’s own network (a namespace and a veth pair) needs root or passwordless sudo'
    : undefined;
}

function run(priv: string[], args: string[]): void {
  const [file, ...rest] = [...priv, ...args];
  const r = spawnSync(file as string, rest, { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${(r.stderr || r.error?.message || '').trim()}`);
}

function tryRun(priv: string[], args: string[]): void {
  const [file, ...rest] = [...priv, ...args];
  spawnSync(file as string, rest, { stdio: 'ignore', timeout: 10_000 });
}

const SERVER = `
const [port, answer] = process.argv.slice(1);
const server = require('node:http').createServer((req, res) => res.end(answer + '\\n'));
server.listen(Number(port), '0.0.0.0', () => console.log('listening'));
setTimeout(() => process.exit(0), 120000);
`;

const LOCK = path.join(os.tmpdir(), 'switchboard-test-net-world.lock');

/** Whether process `pid` is alive (signal 0: EPERM means it is, someone else's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Wait for the machine's one world (see the file comment); resolves with its release. */
async function takeWorldLock(waitMs: number): Promise<() => void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(path.join(LOCK, 'pid'), String(process.pid));
      let held = true;
      return () => {
        if (held) rmSync(LOCK, { recursive: true, force: true });
        held = false;
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let holder = Number.NaN;
    try {
      holder = Number(readFileSync(path.join(LOCK, 'pid'), 'utf8'));
    } catch {
      // Made a moment ago, its pid not written yet: wait like for a live holder.
    }
    if (Number.isInteger(holder) && holder > 0 && !alive(holder)) rmSync(LOCK, { recursive: true, force: true });
    else if (Date.now() > deadline) throw new Error(`another run's test network was still up after ${waitMs} ms`);
    else await new Promise((r) => setTimeout(r, 200));
  }
}

/** Build the world and start its server; waits up to `waitMs` while another run's world is up. */
export async function startNetWorld(waitMs = 45_000): Promise<NetWorld> {
  const priv = privilege();
  if (priv === null) throw new Error(netWorldUnavailable());
  const release = await takeWorldLock(waitMs);
  // The kernel tears a deleted namespace and its veth pair down after `ip netns del` returns; a
  // world made while the last one is still going away was seen refused (EINVAL): made afresh.
  for (let attempt = 1; ; attempt++) {
    try {
      const world = await buildWorld(priv);
      return {
        ...world,
        close: async () => {
          await world.close();
          release();
        },
      };
    } catch (err) {
      if (attempt === 3) {
        release();
        throw err;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** One try at the world (see {@link startNetWorld}); on failure, what it made is removed. */
async function buildWorld(priv: string[]): Promise<NetWorld> {
  const tag = randomBytes(3).toString('hex');
  const ns = `sbworld-${tag}`;
  const hostSide = `sbw${tag}a`;
  const worldSide = `sbw${tag}b`;
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const answer = `world ${randomBytes(6).toString('hex')}`;
  const world = { internet: '198.51.100.1', private: '10.123.0.1', linkLocal: '169.254.77.1' };
  let server: ChildProcess | undefined;
  const close = async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
      const gone = new Promise((r) => server?.once('exit', r));
      server.kill('SIGTERM');
      await Promise.race([gone, new Promise((r) => setTimeout(r, 3000))]);
    }
    // Deleting the namespace deletes the veth pair; the second is for a pair left half made.
    tryRun(priv, ['ip', 'netns', 'del', ns]);
    tryRun(priv, ['ip', 'link', 'del', hostSide]);
    // Until the host side is gone (its addresses with it), for the next world.
    for (let i = 0; i < 50 && linkExists(hostSide); i++) await new Promise((r) => setTimeout(r, 100));
  };
  try {
    run(priv, ['ip', 'netns', 'add', ns]);
    run(priv, ['ip', 'link', 'add', hostSide, 'type', 'veth', 'peer', 'name', worldSide, 'netns', ns]);
    for (const [addr, hostAddr] of [
      [world.internet, '198.51.100.254'],
      [world.private, '10.123.0.254'],
      [world.linkLocal, '169.254.77.254'],
    ] as const) {
      run(priv, ['ip', 'addr', 'add', `${hostAddr}/24`, 'dev', hostSide]);
      run(priv, ['ip', '-n', ns, 'addr', 'add', `${addr}/24`, 'dev', worldSide]);
    }
    run(priv, ['ip', 'link', 'set', hostSide, 'up']);
    run(priv, ['ip', '-n', ns, 'link', 'set', worldSide, 'up']);
    run(priv, ['ip', '-n', ns, 'link', 'set', 'lo', 'up']);
    const [file, ...args] = [...priv, 'ip', 'netns', 'exec', ns, process.execPath, '-e', SERVER, String(port), answer];
    const started = spawn(file as string, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    server = started;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the world’s server did not start in 30 s')), 30_000);
      started.stdout?.once('data', () => {
        clearTimeout(timer);
        resolve();
      });
      started.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the world’s server exited (${code})`));
      });
    });
  } catch (err) {
    await close();
    throw err;
  }
  return { ...world, port, answer, close };
}

/** Whether the host has a link named `name`. */
function linkExists(name: string): boolean {
  return spawnSync('ip', ['link', 'show', name], { stdio: 'ignore', timeout: 10_000 }).status === 0;
}
