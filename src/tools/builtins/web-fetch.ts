/**
 * `web_fetch {url, question?}`: fetch a public http(s) page (SSRF-checked on every hop, see
 * `../ssrf.ts`), text content types only, at most `tools.web_fetch_max_bytes`, within
 * `tools.web_fetch_timeout_seconds`. HTML becomes readable text (html-to-text). With
 * `question`, the configured model answers it from the page instead of returning the page.
 */
import { z } from 'zod';
import { defineTool } from '../define.js';
import { looksBinary } from '../file-io.js';
import { type AddressException, FetchRefused, isTextual, type Resolver, safeFetch } from '../ssrf.js';
import type { ToolResult } from '../types.js';
import { fail, formatBytes } from './common.js';

/** Most characters of page text returned to the model. */
export const MAX_PAGE_CHARS = 60_000;
/** Most characters of page text given to the model that answers `question`. */
export const MAX_QUESTION_CHARS = 100_000;

const schema = z
  .object({
    url: z.string().min(1).max(4000),
    question: z.string().min(1).max(2000).optional(),
  })
  .strict();

/** Options for building the tool; test hooks, never reachable from configuration. */
export interface WebFetchOptions {
  resolver?: Resolver;
  allowException?: AddressException;
}

function charsetOf(contentType: string): string {
  const m = /charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType);
  return m?.[1]?.toLowerCase() ?? 'utf-8';
}

function decode(body: Buffer, contentType: string): string {
  try {
    return new TextDecoder(charsetOf(contentType)).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

function absolute(href: string, base: string): string {
  try {
    return new URL(href, base).toString();
  } catch {
    return href;
  }
}

/**
 * Turn HTML into readable text: headings, lists and links kept; scripts, images and forms dropped.
 * The converter is loaded on first use (it is a large module most starts never need).
 */
export async function htmlToText(html: string, baseUrl: string): Promise<string> {
  const { convert } = await import('html-to-text');
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]?.replace(/\s+/g, ' ').trim();
  const text = convert(html, {
    wordwrap: false,
    selectors: [
      {
        selector: 'a',
        options: {
          hideLinkHrefIfSameAsText: true,
          ignoreHref: false,
          pathRewrite: (href: string) => absolute(href, baseUrl),
        },
      },
      { selector: 'img', format: 'skip' },
      { selector: 'script', format: 'skip' },
      { selector: 'style', format: 'skip' },
      { selector: 'noscript', format: 'skip' },
      { selector: 'svg', format: 'skip' },
      { selector: 'form', format: 'skip' },
      { selector: 'nav', format: 'skip' },
      { selector: 'h1', options: { uppercase: false } },
      { selector: 'h2', options: { uppercase: false } },
      { selector: 'h3', options: { uppercase: false } },
      { selector: 'table', format: 'dataTable' },
    ],
  })
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return title ? `# ${title}\n\n${text}` : text;
}

/** Build the `web_fetch` tool. */
export function createWebFetchTool(options: WebFetchOptions = {}) {
  return defineTool({
    name: 'web_fetch',
    description: 'Fetch a public web page as readable text; with question, only the answer found on it.',
    schema,
    meta: { category: 'network', defaultApproval: 'require', primaryKey: 'url', subAgent: true, source: 'builtin' },
    describe: (a) => `web_fetch ${a.url}`,
    preview: (a) => (a.question ? `${a.url}\nQuestion: ${a.question}` : a.url),
    async execute(args, ctx): Promise<ToolResult> {
      const timeoutS = ctx.config.tools.web_fetch_timeout_seconds;
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutS * 1000)]);
      let res: Awaited<ReturnType<typeof safeFetch>>;
      try {
        res = await safeFetch(args.url, {
          maxBytes: ctx.config.tools.web_fetch_max_bytes,
          signal,
          resolver: options.resolver,
          allowException: options.allowException,
        });
      } catch (err) {
        if (err instanceof FetchRefused) return fail(err.message);
        if (ctx.signal.aborted) return fail(`fetch of ${args.url} was stopped`);
        if (signal.aborted) return fail(`fetch of ${args.url} timed out after ${timeoutS} s`);
        const e = err as NodeJS.ErrnoException;
        return fail(`fetch of ${args.url} failed: ${e.code ?? ''} ${e.message}`.trim());
      }
      const hops = res.redirects ? ` (after ${res.redirects} redirect${res.redirects === 1 ? '' : 's'})` : '';
      if (!isTextual(res.contentType)) {
        return fail(`${res.url}${hops}: content type ${res.contentType} is not text; not fetched`);
      }
      if (res.contentType === '' && looksBinary(res.body.subarray(0, 8192))) {
        return fail(`${res.url}${hops}: binary content; not fetched`);
      }
      const raw = decode(res.body, res.contentType);
      const isHtml = /html/i.test(res.contentType) || (res.contentType === '' && /^\s*<(!doctype|html)/i.test(raw));
      let text = isHtml ? await htmlToText(raw, res.url) : raw;
      if (res.status >= 400) {
        return fail(`${res.url}${hops}: HTTP ${res.status}\n${text.slice(0, 2000)}`, `HTTP ${res.status}`);
      }
      const notes: string[] = [];
      if (res.truncated) notes.push(`[page cut at ${formatBytes(ctx.config.tools.web_fetch_max_bytes)}]`);
      if (args.question) {
        const page = text.slice(0, MAX_QUESTION_CHARS);
        const prompt =
          'Answer the question using only the web page below. Quote exact figures and names. ' +
          'If the page does not contain the answer, say so.\n\n' +
          `Question: ${args.question}\n\nPage (${res.url}):\n<<<\n${page}\n>>>`;
        let answer: string;
        try {
          answer = await ctx.complete(prompt, ctx.signal);
        } catch (err) {
          return fail(`fetched ${res.url} but the model could not answer: ${(err as Error).message}`);
        }
        return { output: `${answer.trim()}\n\nSource: ${res.url}`, summary: `answered from ${new URL(res.url).host}` };
      }
      if (text.length > MAX_PAGE_CHARS) {
        notes.push(`[text cut at ${MAX_PAGE_CHARS} characters of ${text.length}; ask a question to search the rest]`);
        text = text.slice(0, MAX_PAGE_CHARS);
      }
      const header = `${res.url}${hops} — HTTP ${res.status}, ${res.contentType || 'unlabelled'}, ${formatBytes(res.body.length)}`;
      return { output: [header, '', text, ...notes].join('\n'), summary: `fetched ${new URL(res.url).host}` };
    },
  });
}

/** The default `web_fetch` tool (system resolver, no exceptions). */
export const webFetchTool = createWebFetchTool();
