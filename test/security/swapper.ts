/**
 * The hostile process the race tests start: `swapper.c` compiled with the system's C compiler
 * (renameat2 with RENAME_EXCHANGE: at every moment one name is the real folder and the other the
 * symlink), else `swapper.mjs` (three renames). It stops by itself after the seconds it is given,
 * and {@link Swapper.stop} kills it before that.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import path from 'node:path';

/** A running swapper. */
export interface Swapper {
  child: ChildProcess;
  /** `renameat2` (atomic exchange) or `renames` (the Node fallback). */
  kind: 'renameat2' | 'renames';
  /** Kill it (if it still runs) and wait for it to end. */
  stop(): Promise<void>;
}

const here = import.meta.dirname;

/** Compile the C swapper into `dir`; undefined when there is no C compiler. */
function compile(dir: string): string | undefined {
  const out = path.join(dir, 'swapper');
  const cc = spawnSync('cc', ['-O2', '-o', out, path.join(here, 'swapper.c')], { encoding: 'utf8', timeout: 60_000 });
  return cc.status === 0 ? out : undefined;
}

/** Start exchanging `a` and `b` for at most `seconds`; `dir` holds the compiled program. */
export function startSwapper(dir: string, a: string, b: string, seconds: number): Swapper {
  const bin = compile(dir);
  const child = bin
    ? spawn(bin, [a, b, String(seconds)], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [path.join(here, 'swapper.mjs'), a, b, String(seconds)], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    kind: bin ? 'renameat2' : 'renames',
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
