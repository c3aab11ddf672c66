/**
 * Running ripgrep for `search` and reading its `--json` output. rg never opens a workspace path
 * on its own outside a sandbox: either it walks a folder inside the sandbox of
 * `search-sandbox.ts`, or it reads files the confined walk opened, handed to it as descriptors
 * (`/proc/self/fd/N` in rg are the very files that were checked). Files rg finds binary are left
 * out, as the fallback leaves them out.
 */
import { spawn } from 'node:child_process';
import { type FileHits, SearchError } from './search-types.js';

/** Matches collected over one or several rg runs. */
export class RgCollector {
  readonly byFile = new Map<string, FileHits>();
  total = 0;
  truncated = false;

  constructor(
    private readonly maxMatches: number,
    /** The file a path rg printed stands for; undefined to drop it (changed between runs). */
    public fileOf: (printed: string) => string | undefined,
  ) {}

  /** Take one line of rg's JSON output; true once the match cap is reached. */
  take(raw: string): boolean {
    if (this.truncated) return true;
    const isHit = raw.startsWith('{"type":"match"') || raw.startsWith('{"type":"context"');
    const isEnd = raw.startsWith('{"type":"end"');
    if (!isHit && !isEnd) return false;
    const msg = JSON.parse(raw) as {
      type: string;
      data: { path: RgText; lines: RgText; line_number: number; binary_offset?: number | null };
    };
    const abs = this.fileOf(rgText(msg.data.path));
    if (abs === undefined) return false;
    if (isEnd) {
      // A file found binary (a NUL byte) is left out, matches and all.
      const f = this.byFile.get(abs);
      if (f && msg.data.binary_offset !== null && msg.data.binary_offset !== undefined) {
        this.byFile.delete(abs);
        this.total -= f.matches;
      }
      return false;
    }
    let f = this.byFile.get(abs);
    if (!f) {
      f = { abs, lines: [], matches: 0 };
      this.byFile.set(abs, f);
    }
    const isMatch = msg.type === 'match';
    f.lines.push({ line: msg.data.line_number, text: rgText(msg.data.lines).replace(/\r?\n$/, ''), match: isMatch });
    if (isMatch) {
      f.matches++;
      if (++this.total >= this.maxMatches) this.truncated = true;
    }
    return this.truncated;
  }
}

interface RgText {
  text?: string;
  bytes?: string;
}

function rgText(t: RgText | undefined): string {
  if (!t) return '';
  return t.text ?? Buffer.from(t.bytes ?? '', 'base64').toString('utf8');
}

/** The rg arguments shared by every run (no file names). */
export function rgBaseArgs(pattern: string, contextLines: number, pcre2: boolean): string[] {
  const args = ['--json', '--no-require-git', '--no-config'];
  if (pcre2) args.push('--pcre2');
  if (contextLines > 0) args.push('--context', String(contextLines));
  args.push('--regexp', pattern);
  return args;
}

/** How one rg run is started. */
export interface RgRun {
  file: string;
  args: string[];
  /** Descriptors handed to rg as 3, 4, … */
  fds: number[];
  signal?: AbortSignal;
  /** Epoch ms after which the run is killed. */
  deadline: number;
}

/** How a run ended. */
export interface RgExit {
  code: number | null;
  stderr: string;
  timedOut: boolean;
}

/** Run rg (or bubblewrap running it), feeding its output to the collector. */
export async function runRg(run: RgRun, collector: RgCollector): Promise<RgExit> {
  const child = spawn(run.file, run.args, {
    stdio: ['ignore', 'pipe', 'pipe', ...run.fds],
    signal: run.signal,
    env: { PATH: process.env.PATH, LANG: process.env.LANG ?? 'C.UTF-8' },
  });
  const { stdout: out, stderr: err } = child;
  if (!out || !err) throw new SearchError('rg started without its output pipes');
  let stderr = '';
  err.setEncoding('utf8');
  err.on('data', (d: string) => {
    if (stderr.length < 4000) stderr += d;
  });
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      child.kill('SIGKILL');
    },
    Math.max(0, run.deadline - Date.now()),
  );
  const exit = new Promise<number | null>((resolve) => {
    child.on('close', (code) => resolve(code));
    child.on('error', () => resolve(null));
  });
  const onLine = (raw: string) => {
    if (collector.take(raw)) child.kill('SIGTERM');
  };
  // Split stdout into lines by hand: cheaper than readline for many small JSON lines.
  let rest = '';
  out.setEncoding('utf8');
  out.on('data', (chunk: string) => {
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
  return { code, stderr, timedOut };
}

/** The error of a run that failed with nothing found (exit 2), in words; undefined when it did not. */
export function rgFailure(exit: RgExit, found: boolean): SearchError | undefined {
  if (exit.code !== 2 || found) return undefined;
  const first = exit.stderr.trim();
  // Files rg could not read (switchboard's own files, covered in its sandbox by an unreadable
  // node; a file without read permission) are skipped, not a failed search: rg still searched the rest.
  const lines = first.split('\n').filter((l) => l.trim() !== '');
  if (lines.length > 0 && lines.every((l) => /: [^:]+ \(os error \d+\)$/.test(l))) return undefined;
  if (/regex parse error|error parsing regex|regex/i.test(first)) {
    return new SearchError(`invalid regex: ${first.replace(/\s+/g, ' ').slice(0, 600)}`);
  }
  return new SearchError(`rg failed: ${first.slice(0, 500)}`);
}

/** The path rg prints for the descriptor at index `i` of {@link RgRun.fds}. */
export function fdArg(i: number): string {
  return `/proc/self/fd/${i + 3}`;
}
