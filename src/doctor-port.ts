/**
 * `switchboard doctor`'s HTTP port check: the port is free to listen on (tried and released at
 * once), as `start` needs it. A port in use is asked whether it is a switchboard already running
 * there (its `/healthz` answers with {@link INSTANCE_HEADER}): that is a note, not a failure; any
 * other process on the port is.
 */
import http from 'node:http';
import net from 'node:net';
import type { DoctorCheck } from './kit/kind.js';

/** The header switchboard's `/healthz` answers with, so a doctor beside it knows its own kind. */
export const INSTANCE_HEADER = 'x-switchboard';

/** The address to reach a server bound to `host` from this machine (a wildcard: loopback). */
function reachable(host: string): string {
  return ['0.0.0.0', '::', ''].includes(host) ? '127.0.0.1' : host;
}

/** What a switchboard on `host:port` says of its health, or null when whatever listens there is not one. */
function runningInstance(host: string, port: number): Promise<{ healthy: boolean; detail: string } | null> {
  // node:http rather than fetch: a peer that hangs up at once must end the question, not leave it pending.
  return new Promise((resolve) => {
    const req = http.get({ host: reachable(host), port, path: '/healthz', timeout: 3_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => {
        if (res.headers[INSTANCE_HEADER] === undefined) return resolve(null);
        const status = res.statusCode ?? 0;
        resolve({ healthy: status === 200, detail: (body.split('\n')[0] ?? '').replace(/^unhealthy: /, '') });
      });
      res.on('error', () => resolve(null));
    });
    // Not HTTP, or no answer in time: not a switchboard.
    req.on('timeout', () => req.destroy(new Error('no answer')));
    req.on('error', () => resolve(null));
  });
}

/** Try to listen on `host:port` and release it; the error code when that fails. */
function tryListen(host: string, port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    server.listen(port, host, () => server.close(() => resolve(null)));
  });
}

/** The `http port` line of the doctor. */
export async function portCheck(host: string, port: number): Promise<DoctorCheck> {
  const name = 'http port';
  const err = await tryListen(host, port);
  if (!err) return { name, ok: true, detail: `${host}:${port} is free` };
  if (err.code === 'EADDRINUSE') {
    const instance = await runningInstance(host, port);
    if (instance?.healthy)
      return { name, ok: true, detail: `switchboard is already running on ${host}:${port} (healthy)` };
    if (instance)
      return {
        name,
        ok: false,
        warnOnly: true,
        detail: `switchboard is already running on ${host}:${port}, unhealthy: ${instance.detail}`,
      };
    return {
      name,
      ok: false,
      detail:
        `port ${port} on ${host} is already in use by another process (start would fail with EADDRINUSE): ` +
        `stop that process or set http.port / SWITCHBOARD_HTTP_PORT`,
    };
  }
  if (err.code === 'EACCES')
    return {
      name,
      ok: false,
      detail: `port ${port} on ${host} needs more privileges than this user has (EACCES): use a port above 1023`,
    };
  if (err.code === 'EADDRNOTAVAIL')
    return { name, ok: false, detail: `${host} is not an address of this machine (EADDRNOTAVAIL): check http.host` };
  return { name, ok: false, detail: `cannot listen on ${host}:${port}: ${err.message}` };
}
