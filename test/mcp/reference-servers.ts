/** The official MCP reference servers from npm (devDependencies), as config entries and processes. */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';

const require = createRequire(import.meta.url);
const pkgDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));

/** server-everything's entry point. */
export const EVERYTHING = path.join(pkgDir('@modelcontextprotocol/server-everything'), 'dist/index.js');
/** server-filesystem's entry point. */
export const FILESYSTEM = path.join(pkgDir('@modelcontextprotocol/server-filesystem'), 'dist/index.js');

/** server-everything over stdio (raw TOML shape). */
export function everythingStdio(extra: Record<string, unknown> = {}) {
  return { command: process.execPath, args: [EVERYTHING, 'stdio'], ...extra };
}

/** server-filesystem over stdio, with the given allowed directories (none: it asks for roots). */
export function filesystemStdio(dirs: string[] = [], extra: Record<string, unknown> = {}) {
  return { command: process.execPath, args: [FILESYSTEM, ...dirs], ...extra };
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** server-everything serving Streamable HTTP on `port`, as a child process. */
export interface EverythingHttp {
  url: string;
  port: number;
  child: ChildProcess;
  /** SIGKILL the server and wait for it to exit. */
  kill(): Promise<void>;
}

/** Start server-everything's Streamable HTTP transport on `port` and wait until it listens. */
export async function startEverythingHttp(port?: number): Promise<EverythingHttp> {
  const p = port ?? (await freePort());
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: String(p) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server-everything did not start listening within 15 s')), 15_000);
    let seen = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited with ${code}: ${seen}`));
    });
  });
  return {
    url: `http://127.0.0.1:${p}/mcp`,
    port: p,
    child,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
  };
}
