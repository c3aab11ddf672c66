/**
 * Regex search over workspace files, two interchangeable backends producing the same structure:
 * `rg --json` when ripgrep is installed, and a JS walker (same skips as rg: .gitignore, hidden,
 * binary, .git, node_modules) when not. Results are sorted by path so pages are stable.
 * Deny globs are passed to rg and, as the guarantee, every result path is checked again.
 */
import { spawn, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { Worker } from 'node:worker_threads';
import path from 'node:path';
import picomatch from 'picomatch';
import type { PathPolicy } from './path-policy.js';
import { walk } from './walk.js';

/** One line of a result: a match or a context line. */
export interface HitLine {
  line: number;
  text: string;
  match: boolean;
}

/** All hits in one file, lines ascending. */
export interface FileHits {
  /** Absolute path. */
  abs: string;
  lines: HitLine[];
  matches: number;
}

/** A finished search. */
export interface SearchOutcome {
  files: FileHits[];
  /** True when the hard match cap stopped the search early. */
  truncated: boolean;
  backend: 'rg' | 'js';
}

/** Options of {@link runSearch}. */
export interface SearchRequest {
  pattern: string;
  /** Absolute file or folder to search. */
  target: string;
  /** Allowed root that contains `target` (deny globs are relative to it). */
  root: string;
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
}

/** A search that could not run (bad regex, rg failure). */
export class SearchError extends Error {}

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
  const outcome = backend === 'rg' ? await searchRgOrPcre2(req) : await searchJs(req);
  const matcher = globMatcher(req.glob);
  outcome.files = outcome.files.filter(
    (f) =>
      !req.policy.isDenied(path.relative(req.root, f.abs)) &&
      !req.policy.isProtected(f.abs) &&
      !req.policy.isHidden(f.abs) &&
      (!matcher || f.abs === req.target || matcher(path.relative(req.target, f.abs).split(path.sep).join('/'))),
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
async function searchRgOrPcre2(req: SearchRequest): Promise<SearchOutcome> {
  try {
    return await searchRg(req, false);
  } catch (err) {
    if (err instanceof SearchError && /--pcre2/.test(err.message)) {
      try {
        return await searchRg(req, true);
      } catch {
        throw err;
      }
    }
    throw err;
  }
}

function rgArgs(req: SearchRequest, pcre2: boolean): string[] {
  const args = ['--json', '--no-require-git', '--no-config', '--glob', '!.git', '--glob', '!node_modules'];
  if (pcre2) args.push('--pcre2');
  if (req.contextLines > 0) args.push('--context', String(req.contextLines));
  for (const g of req.policy.denyGlobs) args.push('--glob', `!${g}`);
  // Other conversations' uploads are not read at all (absolute globs match rg's absolute paths).
  for (const hidden of req.policy.hiddenEntriesIn(req.target)) args.push('--glob', `!${globLiteral(hidden)}`);
  // The user's glob is never passed as --glob: an rg include glob overrides .gitignore, and the
  // fallback (and the docs) promise that ignored files stay ignored. A file-name glob becomes a
  // file type instead (types respect ignore rules); path globs are applied to the results.
  if (req.glob && !req.glob.includes('/') && !req.glob.includes(':')) {
    args.push('--type-add', `sbglob:${req.glob}`, '--type', 'sbglob');
  }
  args.push('--regexp', req.pattern, '--', req.target);
  return args;
}

interface RgText {
  text?: string;
  bytes?: string;
}

function rgText(t: RgText | undefined): string {
  if (!t) return '';
  return t.text ?? Buffer.from(t.bytes ?? '', 'base64').toString('utf8');
}

async function searchRg(req: SearchRequest, pcre2: boolean): Promise<SearchOutcome> {
  const child = spawn('rg', rgArgs(req, pcre2), { stdio: ['ignore', 'pipe', 'pipe'], signal: req.signal });
  const byFile = new Map<string, FileHits>();
  let total = 0;
  let truncated = false;
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => {
    if (stderr.length < 4000) stderr += d;
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, req.timeoutMs ?? SEARCH_TIMEOUT_MS);
  const exit = new Promise<number | null>((resolve) => {
    child.on('close', (code) => resolve(code));
    child.on('error', () => resolve(null));
  });
  const onLine = (raw: string) => {
    if (truncated) return;
    if (!raw.startsWith('{"type":"match"') && !raw.startsWith('{"type":"context"')) return;
    const msg = JSON.parse(raw) as {
      type: string;
      data: { path: RgText; lines: RgText; line_number: number };
    };
    const abs = path.resolve(rgText(msg.data.path));
    let f = byFile.get(abs);
    if (!f) {
      f = { abs, lines: [], matches: 0 };
      byFile.set(abs, f);
    }
    const isMatch = msg.type === 'match';
    f.lines.push({ line: msg.data.line_number, text: rgText(msg.data.lines).replace(/\r?\n$/, ''), match: isMatch });
    if (isMatch) {
      f.matches++;
      if (++total >= req.maxMatches) {
        truncated = true;
        child.kill('SIGTERM');
      }
    }
  };
  // Split stdout into lines by hand: cheaper than readline for many small JSON lines.
  let rest = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const text = rest + chunk;
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      onLine(text.slice(start, nl));
      start = nl + 1;
    }
    rest = text.slice(start);
  });
  const code = await exit;
  clearTimeout(timer);
  if (rest) onLine(rest);
  if (timedOut) throw new SearchError(timeoutMessage(req.timeoutMs));
  if (!truncated && code === 2 && byFile.size === 0) {
    const first = stderr.trim();
    if (/regex parse error|error parsing regex|regex/i.test(first)) {
      throw new SearchError(`invalid regex: ${first.replace(/\s+/g, ' ').slice(0, 600)}`);
    }
    throw new SearchError(`rg failed: ${first.slice(0, 500)}`);
  }
  if (code === null && !truncated && req.signal?.aborted) throw new SearchError('search cancelled');
  return { files: [...byFile.values()], truncated, backend: 'rg' };
}

/** Compile a JS regex or throw a SearchError naming the problem. */
export function compileRegex(pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch (err) {
    throw new SearchError(`invalid regex: ${(err as Error).message}`);
  }
}

/** Longest a search may run (rg or the JS fallback) before it is stopped. */
export const SEARCH_TIMEOUT_MS = 60_000;

function timeoutMessage(ms = SEARCH_TIMEOUT_MS): string {
  return `search timed out after ${ms / 1000} s; simplify the regex or narrow the path`;
}

async function searchJs(req: SearchRequest): Promise<SearchOutcome> {
  compileRegex(req.pattern); // report a bad pattern before walking
  const st = await fs.stat(req.target);
  const candidates: string[] = [];
  if (st.isFile()) {
    candidates.push(req.target);
  } else {
    const matcher = globMatcher(req.glob);
    for await (const e of walk(req.target, { policy: req.policy, root: req.root, signal: req.signal })) {
      if (e.kind !== 'file') continue;
      if (matcher && !matcher(e.rel.split(path.sep).join('/'))) continue;
      candidates.push(e.abs);
    }
  }
  const result = await scanInWorker(
    { pattern: req.pattern, files: candidates, contextLines: req.contextLines, maxMatches: req.maxMatches },
    req.signal,
    req.timeoutMs ?? SEARCH_TIMEOUT_MS,
  );
  return { ...result, backend: 'js' };
}

function scanInWorker(
  data: { pattern: string; files: string[]; contextLines: number; maxMatches: number },
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<{ files: FileHits[]; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./search-worker.mjs', import.meta.url), { workerData: data });
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      fn();
    };
    const timer = setTimeout(() => finish(() => reject(new SearchError(timeoutMessage(timeoutMs)))), timeoutMs);
    const onAbort = () => finish(() => reject(new SearchError('search cancelled')));
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (m: { files: FileHits[]; truncated: boolean }) => finish(() => resolve(m)));
    worker.once('error', (err) => finish(() => reject(new SearchError(`search failed: ${err.message}`))));
    worker.once('exit', () => finish(() => reject(new SearchError('search worker stopped'))));
  });
}
