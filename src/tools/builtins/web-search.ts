/**
 * `web_search {query, max_results?}`: search the web through the configured backend
 * (`tools.web_search.backend`): `none` (a clear message), `searxng` (JSON API at
 * `tools.web_search.url`), `tavily` or `brave` (API key in `tools.web_search.api_key`; `url`
 * overrides the API root). Results are normalised to title, url, snippet; default 5, at most 20.
 */
import { z } from 'zod';
import type { Config } from '../../config.js';
import { defineTool } from '../define.js';
import type { ToolResult } from '../types.js';
import { fail } from './common.js';

/** Most results returned. */
export const MAX_RESULTS = 20;
/** Results returned when `max_results` is not given. */
export const DEFAULT_RESULTS = 5;

/** One normalised result. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

const schema = z
  .object({
    query: z.string().min(1).max(500).describe('What to search for.'),
    max_results: z
      .number()
      .int()
      .min(1)
      .max(MAX_RESULTS)
      .optional()
      .describe(`Results wanted (default ${DEFAULT_RESULTS}, at most ${MAX_RESULTS}).`),
  })
  .strict();

type Backend = Config['tools']['web_search'];

const DEFAULT_ROOTS = { tavily: 'https://api.tavily.com', brave: 'https://api.search.brave.com' } as const;

function stripTags(s: unknown): string {
  return String(s ?? '')
    .replace(/<[^>]+>/g, '')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
}

async function getJson(url: string, init: RequestInit, what: string): Promise<unknown> {
  const res = await fetch(url, init);
  if (!res.ok) {
    const body = (await res.text().catch(() => '')).slice(0, 300);
    throw new Error(`${what} answered HTTP ${res.status}${body ? `: ${body}` : ''}`);
  }
  return res.json();
}

/** Query the configured backend. @throws Error with a message naming the backend. */
export async function searchWeb(
  cfg: Backend,
  query: string,
  count: number,
  signal: AbortSignal,
): Promise<SearchResult[]> {
  const root = (cfg.url ?? '').replace(/\/+$/, '');
  const timeout = AbortSignal.any([signal, AbortSignal.timeout(20_000)]);
  if (cfg.backend === 'searxng') {
    const u = new URL(`${root}/search`);
    u.searchParams.set('q', query);
    u.searchParams.set('format', 'json');
    const data = (await getJson(
      u.toString(),
      { signal: timeout, headers: { accept: 'application/json' } },
      'SearXNG',
    )) as {
      results?: { title?: string; url?: string; content?: string }[];
    };
    return (data.results ?? []).map((r) => ({
      title: stripTags(r.title),
      url: String(r.url ?? ''),
      snippet: stripTags(r.content),
    }));
  }
  if (cfg.backend === 'tavily') {
    const data = (await getJson(
      `${root || DEFAULT_ROOTS.tavily}/search`,
      {
        method: 'POST',
        signal: timeout,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${cfg.api_key}` },
        body: JSON.stringify({ query, max_results: count }),
      },
      'Tavily',
    )) as { results?: { title?: string; url?: string; content?: string }[] };
    return (data.results ?? []).map((r) => ({
      title: stripTags(r.title),
      url: String(r.url ?? ''),
      snippet: stripTags(r.content),
    }));
  }
  if (cfg.backend === 'brave') {
    const u = new URL(`${root || DEFAULT_ROOTS.brave}/res/v1/web/search`);
    u.searchParams.set('q', query);
    u.searchParams.set('count', String(count));
    const data = (await getJson(
      u.toString(),
      { signal: timeout, headers: { accept: 'application/json', 'x-subscription-token': cfg.api_key ?? '' } },
      'Brave Search',
    )) as { web?: { results?: { title?: string; url?: string; description?: string }[] } };
    return (data.web?.results ?? []).map((r) => ({
      title: stripTags(r.title),
      url: String(r.url ?? ''),
      snippet: stripTags(r.description),
    }));
  }
  return [];
}

/** Why the backend cannot be used as configured, or null. */
export function backendProblem(cfg: Backend): string | null {
  if (cfg.backend === 'none') {
    return 'web search is not configured: set tools.web_search.backend to searxng (with tools.web_search.url), tavily or brave (with tools.web_search.api_key)';
  }
  if (cfg.backend === 'searxng' && !cfg.url) return 'tools.web_search.url must point at a SearXNG instance';
  if ((cfg.backend === 'tavily' || cfg.backend === 'brave') && !cfg.api_key) {
    return `tools.web_search.api_key is required for the ${cfg.backend} backend`;
  }
  return null;
}

/** The `web_search` tool. */
export const webSearchTool = defineTool({
  name: 'web_search',
  description: 'Search the web; returns titles, URLs and snippets. Use web_fetch to read a result.',
  schema,
  meta: { category: 'network', defaultApproval: 'require', primaryKey: 'query', subAgent: true, source: 'builtin' },
  describe: (a) => `web_search ${a.query}`,
  preview: (a) => a.query,
  async execute(args, ctx): Promise<ToolResult> {
    const cfg = ctx.config.tools.web_search;
    const problem = backendProblem(cfg);
    if (problem) return fail(problem);
    const count = args.max_results ?? DEFAULT_RESULTS;
    let results: SearchResult[];
    try {
      results = await searchWeb(cfg, args.query, count, ctx.signal);
    } catch (err) {
      return fail(`web search failed: ${(err as Error).message}`);
    }
    results = results.filter((r) => /^https?:\/\//.test(r.url)).slice(0, count);
    if (results.length === 0) return { output: `No results for ${JSON.stringify(args.query)}`, summary: 'no results' };
    const body = results.map(
      (r, i) => `${i + 1}. ${r.title || '(untitled)'}\n   ${r.url}${r.snippet ? `\n   ${r.snippet}` : ''}`,
    );
    return { output: body.join('\n'), summary: `${results.length} result${results.length === 1 ? '' : 's'}` };
  },
});
