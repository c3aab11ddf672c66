/**
 * Regex search over workspace files, two interchangeable backends producing the same structure:
 * ripgrep when installed, and a JS scanner (same skips as rg: .gitignore, hidden, binary, .git,
 * node_modules) when not. Results are sorted by path so pages are stable. Deny globs are passed
 * to rg and, as the guarantee, every result path is checked again.
 *
 * Nothing here opens a workspace path by its name: the start was opened by the confined
 * primitive, and files are read either from descriptors the confined walk (`confined/tree.ts`)
 * opened, or by rg walking a folder inside a sandbox that holds only that root
 * (`search-sandbox.ts`), so a symlink swapped in meanwhile leads nowhere else.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import picomatch from 'picomatch';
import { type OpenedEntry, openEntry } from './confined/open.js';
import { walkTree } from './confined/tree.js';
import type { PathPolicy } from './path-policy.js';
import { fdArg, RgCollector, type RgExit, rgBaseArgs, rgFailure, runRg } from './search-rg.js';
import { ripgrepPath, rgSandboxWorks, sandboxedRg } from './search-sandbox.js';
import { type FileHits, SearchError, type SearchOutcome } from './search-types.js';

export { type FileHits, type HitLine, SearchError, type SearchOutcome } from './search-types.js';

/** Options of {@link runSearch}. */
export interface SearchRequest {
  pattern: string;
  /** The file or folder to search, opened by `openEntry` (the caller closes it). */
  start: OpenedEntry;
  policy: PathPolicy;
  glob?: string;
  contextLines: number;
  /** Stop after this many matches in all. */
  maxMatches: number;
  signal?: AbortSignal;
  /** Force a backend (tests, benchmarks); default: rg when present. */
  backend?: 'rg' | 'js';
  /** Time limit; default {@link SEARCH_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** False: rg never walks in its sandbox, it reads descriptors the confined walk opened. */
  rgSandbox?: boolean;
}

/** Longest a search may run (rg or the JS fallback) before it is stopped. */
export const SEARCH_TIMEOUT_MS = 60_000;

/**
 * Files handed to one rg run as descriptors: each run costs a start, so as many as a quarter of
 * the process's descriptor limit allows (at most 4096, at least 64).
 */
function rgBatch(): number {
  let limit = 1024;
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    if (Number.isFinite(soft) && soft > 0) limit = soft;
  } catch {
    // no /proc: keep the small default
  }
  return Math.max(64, Math.min(4096, Math.floor(limit / 4)));
}
/** Files handed to the JS scanner at a time. */
const JS_BATCH = 32;

let rgPresent: boolean | undefined;

/** True when `rg` is on PATH (checked once). */
export function hasRipgrep(): boolean {
  if (rgPresent === undefined) {
    const r = spawnSync('rg', ['--version'], { stdio: 'ignore' });
    rgPresent = r.status === 0;
  }
  return rgPresent;
}

/** Run a search with rg or the JS fallback. */
export async function runSearch(req: SearchRequest): Promise<SearchOutcome> {
  const backend = req.backend ?? (hasRipgrep() ? 'rg' : 'js');
  const deadline = Date.now() + (req.timeoutMs ?? SEARCH_TIMEOUT_MS);
  const outcome = backend === 'rg' ? await searchRgOrPcre2(req, deadline) : await searchJs(req, deadline);
  const target = req.start.abs;
  const matcher = globMatcher(req.glob);
  outcome.files = outcome.files.filter(
    (f) =>
      !req.policy.isDenied(path.relative(req.start.root, f.abs)) &&
      !req.policy.isProtected(f.abs) &&
      !req.policy.isHidden(f.abs) &&
      (!matcher || f.abs === target || matcher(path.relative(target, f.abs).split(path.sep).join('/'))),
  );
  outcome.files.sort((a, b) => (a.abs < b.abs ? -1 : a.abs > b.abs ? 1 : 0));
  for (const f of outcome.files) f.lines.sort((a, b) => a.line - b.line);
  return outcome;
}

/** A path as a glob that matches exactly it (glob characters escaped). */
function globLiteral(p: string): string {
  return p.replace(/[\\*?[\]{}!]/g, '\\$&');
}

function globMatcher(glob: string | undefined): ((p: string) => boolean) | null {
  return glob ? picomatch(glob, { dot: true, basename: !glob.includes('/') }) : null;
}

/** rg's default engine has no look-around or backreferences; its PCRE2 engine has. */
async function searchRgOrPcre2(req: SearchRequest, deadline: number): Promise<SearchOutcome> {
  const rg = ripgrepPath();
  if (!rg) throw new SearchError('rg is not installed');
  const once = (pcre2: boolean) =>
    req.start.stat.isDirectory() && req.rgSandbox !== false && rgSandboxWorks()
      ? searchRgSandboxed(req, rg, pcre2, deadline)
      : searchRgOverFds(req, rg, pcre2, deadline);
  try {
    return await once(false);
  } catch (err) {
    if (err instanceof SearchError && /--pcre2/.test(err.message)) {
      try {
        return await once(true);
      } catch {
        throw err;
      }
    }
    throw err;
  }
}

function timeoutMessage(ms = SEARCH_TIMEOUT_MS): string {
  return `search timed out after ${ms / 1000} s; simplify the regex or narrow the path`;
}

/** Turn how a run ended into an error, when it is one. */
function checkExit(exit: RgExit, collector: RgCollector, req: SearchRequest): void {
  if (exit.timedOut) throw new SearchError(timeoutMessage(req.timeoutMs));
  if (collector.truncated) return;
  if (exit.code !== 0 && /^bwrap: /m.test(exit.stderr)) {
    throw new SearchError(`the search sandbox failed: ${exit.stderr.trim().slice(0, 500)}`);
  }
  const failure = rgFailure(exit, collector.byFile.size > 0);
  if (failure) throw failure;
  if (exit.code === null && req.signal?.aborted) throw new SearchError('search cancelled');
}

/** rg walks the start folder itself, inside a sandbox holding only its root (see `search-sandbox.ts`). */
async function searchRgSandboxed(
  req: SearchRequest,
  rg: string,
  pcre2: boolean,
  deadline: number,
): Promise<SearchOutcome> {
  const args = [...rgBaseArgs(req.pattern, req.contextLines, pcre2), '--glob', '!.git', '--glob', '!node_modules'];
  for (const g of req.policy.denyGlobs) args.push('--glob', `!${g}`);
  // Other conversations' uploads are not read at all (absolute globs match rg's absolute paths).
  for (const hidden of req.policy.hiddenEntriesIn(req.start.abs)) args.push('--glob', `!${globLiteral(hidden)}`);
  // The user's glob is never passed as --glob: an rg include glob overrides .gitignore, and the
  // fallback (and the docs) promise that ignored files stay ignored. A file-name glob becomes a
  // file type instead (types respect ignore rules); path globs are applied to the results.
  if (req.glob && !req.glob.includes('/') && !req.glob.includes(':')) {
    args.push('--type-add', `sbglob:${req.glob}`, '--type', 'sbglob');
  }
  args.push('--', req.start.abs);
  // The whole root is mounted so that the .gitignore files above the start still apply.
  const root = await openEntry(req.policy, req.start.root, 'read');
  try {
    const collector = new RgCollector(req.maxMatches, (printed) => path.resolve(printed));
    const exit = await runRg(
      {
        file: 'bwrap',
        args: sandboxedRg(rg, root.abs, req.policy.protectedPaths(), args, req.policy.hiddenEntriesIn(root.abs)),
        fds: [root.handle.fd],
        signal: req.signal,
        deadline,
      },
      collector,
    );
    checkExit(exit, collector, req);
    return { files: [...collector.byFile.values()], truncated: collector.truncated, backend: 'rg' };
  } finally {
    await root.handle.close();
  }
}

/** A file to scan: opened by the confined walk (or the start itself, which the caller owns). */
interface OpenedFile {
  abs: string;
  handle: FileHandle;
  owned: boolean;
}

async function closeAll(batch: OpenedFile[]): Promise<void> {
  await Promise.all(batch.filter((f) => f.owned).map((f) => f.handle.close()));
}

/** The files to search, opened, in batches: the start file itself, or the files below the start folder. */
async function* openedBatches(req: SearchRequest, size: number): AsyncGenerator<OpenedFile[]> {
  const { start } = req;
  if (!start.stat.isDirectory()) {
    if (start.stat.isFile()) yield [{ abs: start.abs, handle: start.handle, owned: false }];
    return;
  }
  const matcher = globMatcher(req.glob);
  let batch: OpenedFile[] = [];
  try {
    const walk = walkTree(start, {
      policy: req.policy,
      root: start.root,
      signal: req.signal,
      openFiles: true,
      fileFilter: matcher ? (rel) => matcher(rel.split(path.sep).join('/')) : undefined,
    });
    for await (const e of walk) {
      const handle = e.handle;
      if (!handle) continue;
      batch.push({ abs: e.abs, handle, owned: true });
      if (batch.length >= size) {
        const full = batch;
        batch = [];
        yield full;
      }
    }
    if (batch.length) {
      const last = batch;
      batch = [];
      yield last;
    }
  } finally {
    await closeAll(batch);
  }
}

/** rg reads exactly the files the confined walk opened, handed over as descriptors. */
async function searchRgOverFds(
  req: SearchRequest,
  rg: string,
  pcre2: boolean,
  deadline: number,
): Promise<SearchOutcome> {
  const collector = new RgCollector(req.maxMatches, () => undefined);
  for await (const batch of openedBatches(req, rgBatch())) {
    try {
      collector.fileOf = (printed) => {
        const m = /^\/proc\/self\/fd\/(\d+)$/.exec(printed);
        return m ? batch[Number(m[1]) - 3]?.abs : undefined;
      };
      const args = [...rgBaseArgs(req.pattern, req.contextLines, pcre2), '--', ...batch.map((_, i) => fdArg(i))];
      const exit = await runRg(
        { file: rg, args, fds: batch.map((f) => f.handle.fd), signal: req.signal, deadline },
        collector,
      );
      checkExit(exit, collector, req);
    } finally {
      await closeAll(batch);
    }
    if (collector.truncated) break;
  }
  return { files: [...collector.byFile.values()], truncated: collector.truncated, backend: 'rg' };
}

/** Compile a JS regex or throw a SearchError naming the problem. */
export function compileRegex(pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch (err) {
    throw new SearchError(`invalid regex: ${(err as Error).message}`);
  }
}

/** The JS fallback: the confined walk opens the files, a worker thread scans them by descriptor. */
async function searchJs(req: SearchRequest, deadline: number): Promise<SearchOutcome> {
  compileRegex(req.pattern); // report a bad pattern before walking
  const worker = new ScanWorker({ pattern: req.pattern, contextLines: req.contextLines, maxMatches: req.maxMatches });
  const files: FileHits[] = [];
  let truncated = false;
  try {
    for await (const batch of openedBatches(req, JS_BATCH)) {
      try {
        const r = await worker.scan(
          batch.map((f) => ({ abs: f.abs, fd: f.handle.fd })),
          req.signal,
          deadline,
          req.timeoutMs,
        );
        files.push(...r.files);
        truncated = r.truncated;
      } finally {
        // The worker is done with these descriptors (it answered, or was terminated).
        await closeAll(batch);
      }
      if (truncated) break;
    }
  } finally {
    await worker.close();
  }
  return { files, truncated, backend: 'js' };
}

/** The scanner thread (`search-worker.mjs`): a pathological regex is cut off by terminating it. */
class ScanWorker {
  private readonly worker: Worker;
  private failed: Error | null = null;

  constructor(data: { pattern: string; contextLines: number; maxMatches: number }) {
    this.worker = new Worker(new URL('./search-worker.mjs', import.meta.url), { workerData: data });
    this.worker.on('error', (err) => {
      this.failed = err;
    });
  }

  /** Scan one batch; rejects (after the thread has stopped) on time out, cancel or failure. */
  scan(
    files: Array<{ abs: string; fd: number }>,
    signal: AbortSignal | undefined,
    deadline: number,
    timeoutMs: number | undefined,
  ): Promise<{ files: FileHits[]; truncated: boolean }> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (fn: () => void, stop: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.worker.off('message', onMessage);
        this.worker.off('exit', onExit);
        if (stop) void this.worker.terminate().then(fn, fn);
        else fn();
      };
      const timer = setTimeout(
        () => finish(() => reject(new SearchError(timeoutMessage(timeoutMs))), true),
        Math.max(0, deadline - Date.now()),
      );
      const onAbort = () => finish(() => reject(new SearchError('search cancelled')), true);
      const onMessage = (m: { files: FileHits[]; truncated: boolean }) => finish(() => resolve(m), false);
      const onExit = () =>
        finish(() => reject(new SearchError(`search failed: ${this.failed?.message ?? 'the worker stopped'}`)), false);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.worker.on('message', onMessage);
      this.worker.once('exit', onExit);
      this.worker.postMessage({ files });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
