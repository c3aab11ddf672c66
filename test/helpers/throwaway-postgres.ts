/**
 * A throw-away PostgreSQL server on 127.0.0.1 with `trust` authentication — the common local
 * setup in which anything that reaches the port is in as the superuser. For tests that prove the
 * shell sandbox cannot reach it. A temp folder owned by an unprivileged user (the server refuses
 * to run as root), a free port; {@link ThrowawayPostgres.close} stops it at once and removes it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { postgresBin } from './system-tools.js';

/** A running server. */
export interface ThrowawayPostgres {
  port: number;
  /** The server's bin folder (psql is there). */
  bin: string;
  close(): void;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The uid and gid to run the server as: postgres (or nobody) when root, else ourselves. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      return { uid, gid };
    } catch {
      // No such user.
    }
  }
  throw new Error('running as root and there is no postgres or nobody user to run PostgreSQL as');
}

/** Start a server; throws when PostgreSQL is not installed or does not start. */
export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed');
  const user = serverUser();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-throwaway-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const port = await freePort();
  const as = { ...(user ?? {}), encoding: 'utf8' as const, timeout: 60_000, cwd: dir };
  const close = () => {
    spawnSync(path.join(bin, 'pg_ctl'), ['-D', path.join(dir, 'data'), '-m', 'immediate', 'stop'], {
      ...as,
      stdio: 'ignore',
    });
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  };
  const step = (file: string, args: string[]) => {
    const r = spawnSync(path.join(bin, file), args, as);
    if (r.status !== 0) {
      close();
      throw new Error(`${file} failed: ${(r.stderr || r.error?.message || '').trim()}`);
    }
  };
  step('initdb', ['-D', path.join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  step('pg_ctl', [
    '-D',
    path.join(dir, 'data'),
    '-w',
    '-l',
    path.join(dir, 'log'),
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
    'start',
  ]);
  return { port, bin, close };
}
