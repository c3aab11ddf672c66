/**
 * `search {query, path?, glob?, context_lines?, output_mode?, offset?}`: regex search over the
 * workspace with ripgrep (or the JS fallback, same output). `content` shows `path:line:text`
 * (context lines as `path-line-text`, `--` between groups), `files` one path per line, `count`
 * `path:count`. Pages of 100 matches (content) or 200 files; lines cut at 300 characters.
 */
import { z } from 'zod';
import { type OpenedEntry, openEntry } from '../confined/open.js';
import { defineTool } from '../define.js';
import type { PathPolicy } from '../path-policy.js';
import { type FileHits, type HitLine, runSearch, SearchError, type SearchOutcome } from '../search-engine.js';
import type { ToolResult } from '../types.js';
import { confinedFailure, fail, shownPath } from './common.js';

/** Matches per page in `content` mode. */
export const MATCHES_PER_PAGE = 100;
/** Files per page in `files` and `count` modes. */
export const FILES_PER_PAGE = 200;
/** Hard cap on matches collected by one search. */
export const MAX_MATCHES = 5000;
/** Longer lines are cut. */
export const MAX_LINE_CHARS = 300;

const schema = z
  .object({
    query: z.string().min(1),
    path: z.string().min(1).optional(),
    glob: z.string().min(1).optional(),
    context_lines: z.number().int().min(0).max(10).optional(),
    output_mode: z.enum(['content', 'files', 'count']).optional(),
    offset: z.number().int().min(0).optional().describe('results to skip'),
  })
  .strict();

/** Options for building the tool (tests and benchmarks force the JS fallback). */
export interface SearchToolOptions {
  backend?: 'rg' | 'js';
  /** Time limit of one search (default 60 s). */
  timeoutMs?: number;
  /**
   * rg walks a folder inside its bubblewrap sandbox where that works (default); false makes it
   * read descriptors the confined walk opened instead, as it does where bubblewrap cannot run.
   */
  rgSandbox?: boolean;
}

/** Build the `search` tool. */
export function createSearchTool(options: SearchToolOptions = {}) {
  return defineTool({
    name: 'search',
    description: 'Search file contents by regular expression (ripgrep), honouring .gitignore. Prefer it to grep.',
    schema,
    meta: { category: 'read', defaultApproval: 'allow', primaryKey: 'query', subAgent: true, source: 'builtin' },
    describe: (a) => `search ${JSON.stringify(a.query)}${a.path ? ` in ${a.path}` : ''}`,
    async execute(args, ctx): Promise<ToolResult> {
      let start: OpenedEntry;
      try {
        start = await openEntry(ctx.paths, args.path ?? '.', 'read');
      } catch (err) {
        return confinedFailure(shownPath(ctx, args.path ?? '.'), err);
      }
      const mode = args.output_mode ?? 'content';
      let outcome: SearchOutcome;
      try {
        outcome = await runSearch({
          pattern: args.query,
          start,
          policy: ctx.paths,
          glob: args.glob,
          contextLines: mode === 'content' ? (args.context_lines ?? 0) : 0,
          maxMatches: MAX_MATCHES,
          signal: ctx.signal,
          backend: options.backend,
          timeoutMs: options.timeoutMs,
          rgSandbox: options.rgSandbox,
        });
      } catch (err) {
        if (err instanceof SearchError) return fail(err.message);
        throw err;
      } finally {
        await start.handle.close();
      }
      return formatSearch(outcome, {
        mode,
        offset: args.offset ?? 0,
        query: args.query,
        policy: ctx.paths,
        contextLines: args.context_lines ?? 0,
      });
    },
  });
}

/** The default `search` tool (rg when installed). */
export const searchTool = createSearchTool();

function cut(text: string): string {
  return text.length > MAX_LINE_CHARS
    ? `${text.slice(0, MAX_LINE_CHARS)} … [${text.length - MAX_LINE_CHARS} more chars]`
    : text;
}

/** Render a search outcome as the tool's text (shared by both backends). */
export function formatSearch(
  outcome: SearchOutcome,
  o: { mode: 'content' | 'files' | 'count'; offset: number; query: string; policy: PathPolicy; contextLines: number },
): ToolResult {
  const total = outcome.files.reduce((n, f) => n + f.matches, 0);
  const more = outcome.truncated ? '+' : '';
  const head = `${total}${more} match${total === 1 ? '' : 'es'} in ${outcome.files.length}${more} file${outcome.files.length === 1 ? '' : 's'}`;
  if (total === 0) return { output: `No matches for ${JSON.stringify(o.query)}`, summary: 'no matches' };
  const notices: string[] = [];
  if (outcome.truncated) notices.push(`[stopped after ${MAX_MATCHES} matches; narrow the query, path or glob]`);
  const body: string[] = [];
  let shownTo: number;
  let pageTotal: number;
  if (o.mode === 'content') {
    pageTotal = total;
    shownTo = Math.min(total, o.offset + MATCHES_PER_PAGE);
    let seen = 0;
    for (const f of outcome.files) {
      const firstIdx = seen;
      seen += f.matches;
      if (seen <= o.offset || firstIdx >= shownTo) continue;
      body.push(...renderFile(f, o.policy.display(f.abs), o.offset - firstIdx, shownTo - firstIdx, o.contextLines > 0));
    }
  } else {
    pageTotal = outcome.files.length;
    shownTo = Math.min(pageTotal, o.offset + FILES_PER_PAGE);
    for (const f of outcome.files.slice(o.offset, shownTo)) {
      body.push(o.mode === 'files' ? o.policy.display(f.abs) : `${o.policy.display(f.abs)}:${f.matches}`);
    }
  }
  if (o.offset >= pageTotal) {
    return fail(
      `offset ${o.offset} is past the last result (${pageTotal} ${o.mode === 'content' ? 'matches' : 'files'})`,
    );
  }
  if (shownTo < pageTotal)
    notices.push(`[showing ${o.offset + 1}-${shownTo} of ${pageTotal}; continue with offset=${shownTo}]`);
  const output = [head, ...body, ...notices].join('\n');
  return { output, summary: head };
}

/** Lines of one file for matches with index in [from, to) (indexes within the file). */
function renderFile(f: FileHits, shown: string, from: number, to: number, separators: boolean): string[] {
  const matchLines = f.lines.filter((l) => l.match);
  const selected = matchLines.slice(Math.max(0, from), to);
  const lo = selected[0]?.line ?? 0;
  const hi = selected[selected.length - 1]?.line ?? 0;
  // Context lines belong to the page when they sit between (or just around) its matches.
  const prevMatch = matchLines[Math.max(0, from) - 1]?.line ?? 0;
  const nextMatch = matchLines[to]?.line ?? Number.POSITIVE_INFINITY;
  const byLine = new Map(f.lines.map((l) => [l.line, l]));
  const out: string[] = [];
  let last = -1;
  for (const l of f.lines) {
    const inPage = l.match
      ? l.line >= lo && l.line <= hi
      : l.line > prevMatch && l.line < nextMatch && nearAny(l.line, lo, hi, byLine);
    if (!inPage) continue;
    if (separators && last !== -1 && l.line !== last + 1) out.push('--');
    out.push(`${shown}${l.match ? ':' : '-'}${l.line}${l.match ? ':' : '-'}${cut(l.text)}`);
    last = l.line;
  }
  return out;
}

/** Context just before the first or after the last selected match: a contiguous run of context lines. */
function nearAny(line: number, lo: number, hi: number, byLine: Map<number, HitLine>): boolean {
  if (line >= lo && line <= hi) return true;
  if (line < lo) {
    for (let n = line + 1; n < lo; n++) if (!byLine.has(n) || byLine.get(n)?.match) return false;
    return true;
  }
  for (let n = hi + 1; n < line; n++) if (!byLine.has(n) || byLine.get(n)?.match) return false;
  return true;
}
