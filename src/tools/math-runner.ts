/**
 * Runs `math` expressions in a worker thread (see `math-worker.mjs`) so a slow or huge
 * computation can be cut off: the worker is terminated when the time limit passes and a fresh
 * one is started for the next call. One worker is kept warm and does not keep the process alive.
 */
import { Worker } from 'node:worker_threads';

/** Memory the math worker may use. */
export const MATH_HEAP_MB = 128;

interface Pending {
  resolve(v: { ok: true; result: string } | { ok: false; error: string }): void;
}

interface Slot {
  w: Worker;
  /** Calls waiting on this worker (a terminated worker fails only its own calls). */
  pending: Map<number, Pending>;
  /** True once mathjs is loaded (the time limit counts from then); false if the worker died first. */
  ready: Promise<boolean>;
}

/**
 * How long one call waits for a fresh worker to load mathjs. The worker itself is not given up
 * when a call stops waiting: on a busy machine loading takes long (about 3 s of CPU), and ending
 * it would make every later call start from zero again; the next call finds it further along.
 */
const STARTUP_WAIT_MS = 15_000;

let worker: Slot | undefined;
let nextId = 1;

function spawnWorker(): Slot {
  const pending = new Map<number, Pending>();
  const w = new Worker(new URL('./math-worker.mjs', import.meta.url), {
    resourceLimits: { maxOldGenerationSizeMb: MATH_HEAP_MB, maxYoungGenerationSizeMb: 32 },
    stdout: true,
    stderr: true,
  });
  w.unref();
  let markReady: (ok: boolean) => void = () => {};
  const ready = new Promise<boolean>((r) => {
    markReady = r;
  });
  w.on('message', (m: { id: number; ok: boolean; result?: string; error?: string; ready?: boolean }) => {
    if (m.ready) {
      markReady(true);
      return;
    }
    const p = pending.get(m.id);
    pending.delete(m.id);
    p?.resolve(m.ok ? { ok: true, result: m.result ?? '' } : { ok: false, error: m.error ?? 'error' });
  });
  const slot: Slot = { w, pending, ready };
  const fail = (error: string) => {
    markReady(false);
    if (worker === slot) worker = undefined;
    for (const [id, p] of pending) {
      pending.delete(id);
      p.resolve({ ok: false, error });
    }
  };
  w.on('error', (err) => fail(/memory/i.test(err.message) ? 'out of memory' : err.message));
  w.on('exit', () => fail('the math worker stopped'));
  return slot;
}

/** Evaluate one expression with a time limit. */
export async function evaluateMath(
  expression: string,
  timeoutMs: number,
): Promise<{ ok: true; result: string } | { ok: false; error: string }> {
  if (!worker) worker = spawnWorker();
  const slot = worker;
  const { w, pending } = slot;
  let waited: NodeJS.Timeout | undefined;
  const started = await Promise.race([
    slot.ready,
    new Promise<'loading'>((r) => {
      waited = setTimeout(() => r('loading'), STARTUP_WAIT_MS);
      waited.unref();
    }),
  ]);
  clearTimeout(waited);
  if (started === 'loading') {
    return { ok: false, error: 'the math worker is still loading (the machine is busy): try again in a moment' };
  }
  if (!started) return { ok: false, error: 'the math worker did not start' };
  const id = nextId++;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      if (worker === slot) worker = undefined;
      void w.terminate();
      resolve({ ok: false, error: `timed out after ${timeoutMs} ms` });
    }, timeoutMs);
    pending.set(id, {
      resolve(v) {
        clearTimeout(timer);
        resolve(v);
      },
    });
    w.postMessage({ id, expression });
  });
}

/** Stop the worker (on shutdown). */
export async function stopMath(): Promise<void> {
  const slot = worker;
  worker = undefined;
  if (slot) await slot.w.terminate();
}
