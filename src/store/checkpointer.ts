/**
 * WAL checkpoints off the event loop. In WAL mode every commit appends pages to the `-wal` file;
 * by default the commit that takes the log past 1 000 pages also copies them back into the
 * database file and syncs it, on the thread that committed: under load that is a 5–10 ms stall of
 * the whole process every few dozen messages. Instead, one worker thread per process keeps its
 * own connection to each open database file and checkpoints it a few times a second when another
 * connection has committed since (`PRAGMA data_version`). The main connection's automatic
 * checkpoint stays as a backstop at a far larger log size, in case the worker falls behind or
 * cannot run.
 *
 * Durability is unchanged: a commit is in the log when it returns, as before; a checkpoint only
 * moves committed pages into the main file (SQLite recovers the log after a crash either way).
 */
import { createRequire } from 'node:module';
import type SQLite from 'better-sqlite3';
import { Worker } from 'node:worker_threads';

/** How often the worker looks for committed pages to checkpoint. */
export const CHECKPOINT_INTERVAL_MS = 200;

/** The main connection's own automatic checkpoint, in pages, while the worker watches its file. */
export const BACKSTOP_AUTOCHECKPOINT_PAGES = 20_000;

/** SQLite's own automatic checkpoint threshold, in pages (its default). */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

/**
 * The worker takes over this long after a file is opened: a short command (`pair`, `doctor`)
 * is over by then and never pays for starting a thread; `start` gets it within its first second.
 */
export const TAKE_OVER_DELAY_MS = 1000;

// Plain CommonJS, evaluated in the worker: a file of its own would need a TypeScript loader in
// tests and a separate entry in the bundle. better-sqlite3 is loaded from the path this module
// resolves, so the worker uses the very same native module.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.sqlite);
const watched = new Map();
let timer = null;
function tick() {
  for (const [file, w] of watched) {
    try {
      const version = w.db.pragma('data_version', { simple: true });
      if (version === w.version) continue;
      w.version = version;
      w.db.pragma('wal_checkpoint(PASSIVE)');
      parentPort.postMessage({ type: 'checkpointed', file });
    } catch {
      // Busy or gone: the next tick tries again (the main connection's backstop still applies).
    }
  }
}
parentPort.on('message', (m) => {
  if (m.type === 'watch') {
    const known = watched.get(m.file);
    if (known) { known.count++; return; }
    try {
      const db = new SQLite(m.file, { fileMustExist: true });
      db.pragma('synchronous = NORMAL');
      watched.set(m.file, { db, version: -1, count: 1 });
    } catch (err) {
      parentPort.postMessage({ type: 'failed', file: m.file, message: String(err && err.message) });
      return;
    }
    if (!timer) timer = setInterval(tick, workerData.intervalMs);
  } else if (m.type === 'unwatch') {
    const w = watched.get(m.file);
    if (!w || --w.count > 0) return;
    watched.delete(m.file);
    try { w.db.close(); } catch {}
    if (watched.size === 0) { clearInterval(timer); timer = null; parentPort.close(); }
  }
});
`;

let worker: Worker | null = null;
let watching = 0;
const listeners = new Set<(event: { type: 'checkpointed' | 'failed'; file: string }) => void>();

function startWorker(): Worker {
  const w = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      sqlite: createRequire(import.meta.url).resolve('better-sqlite3'),
      intervalMs: CHECKPOINT_INTERVAL_MS,
    },
    // A small thread: it holds a connection per file and runs one pragma at a time.
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
  });
  // It must never keep the process alive, nor take it down.
  w.unref();
  w.on('message', (event: { type: 'checkpointed' | 'failed'; file: string }) => {
    for (const listener of listeners) listener(event);
  });
  w.on('error', () => {});
  w.on('exit', () => {
    if (worker !== w) return;
    // Gone while files were watched (it crashed, or ran out of memory): their connections go back
    // to checkpointing themselves.
    worker = null;
    watching = 0;
    for (const listener of listeners) listener({ type: 'failed', file: '*' });
  });
  return w;
}

/**
 * Checkpoint `file` off the event loop until the returned function is called (when its
 * connection closes). Returns null when no worker could be started: the caller then keeps
 * SQLite's own checkpoints.
 */
export function watchCheckpoints(file: string): (() => void) | null {
  try {
    worker ??= startWorker();
  } catch {
    return null;
  }
  const w = worker;
  watching++;
  w.postMessage({ type: 'watch', file });
  let done = false;
  return () => {
    if (done) return;
    done = true;
    if (worker !== w) return;
    w.postMessage({ type: 'unwatch', file });
    // The worker ends itself once it watches nothing; a later watch starts a new one.
    if (--watching === 0) worker = null;
  };
}

/** Be told of the worker's checkpoints and failures (tests and diagnostics). */
export function onCheckpoint(
  listener: (event: { type: 'checkpointed' | 'failed'; file: string }) => void,
): () => boolean {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Hand `sqlite`'s checkpoints (its file is `file`) to the worker, {@link TAKE_OVER_DELAY_MS} after
 * now. Returns what to call once the connection is closed. Until the worker has the file, or again
 * if it fails, the connection checkpoints itself as SQLite does by default.
 */
export function checkpointOffThread(sqlite: SQLite.Database, file: string): () => void {
  let unwatch: (() => void) | null = null;
  let stopListening = (): boolean => false;
  const timer = setTimeout(() => {
    if (!sqlite.open) return;
    unwatch = watchCheckpoints(file);
    if (!unwatch) return;
    sqlite.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
    stopListening = onCheckpoint((event) => {
      if (event.type === 'failed' && (event.file === '*' || event.file === file) && sqlite.open) {
        sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
      }
    });
  }, TAKE_OVER_DELAY_MS);
  timer.unref();
  return () => {
    clearTimeout(timer);
    stopListening();
    unwatch?.();
  };
}
