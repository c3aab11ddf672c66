/**
 * Small HTTP helpers of the web chat: who is asking (session, CSRF), JSON in and out with capped
 * bodies, and the static page shells and built client assets (no inline script: the CSP forbids it).
 */
import { existsSync, readFileSync } from 'node:fs';
import type http from 'node:http';
import { fileURLToPath } from 'node:url';
import { lexer } from 'marked';
import { readBody } from '../../kit/index.js';
import type { Db, WebSession } from '../../kit/index.js';
import { csrfOk, SECURITY_HEADERS, sessionOf } from './auth.js';
import { escapeText, markdownHtml } from './html.js';

/** Largest JSON body a web request may send. */
const JSON_LIMIT = 64 * 1024;

/** A handler that runs for a signed-in user. */
export type Authed = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  session: WebSession,
  url: URL,
) => Promise<void> | void;

/** A refusal with its HTTP status; the message is shown to the user. */
export class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Send JSON with the security headers. */
export function json(res: http.ServerResponse, status: number, value: unknown): void {
  res
    .writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8' })
    .end(JSON.stringify(value));
}

/** Read a JSON object body (at most 64 KB). */
export async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  let raw: Buffer;
  try {
    raw = await readBody(req, JSON_LIMIT);
  } catch {
    throw new HttpRefusal(413, `request body over ${JSON_LIMIT} bytes`);
  }
  try {
    const v = JSON.parse(raw.toString('utf8')) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new HttpRefusal(400, 'expected a JSON object');
}

/** A string field of a JSON body, or a 400. */
export function field(body: Record<string, unknown>, name: string, optional = false): string {
  const v = body[name];
  if (typeof v === 'string') return v;
  if (optional && v === undefined) return '';
  throw new HttpRefusal(400, `expected "${name}" to be a string`);
}

/**
 * Wrap a handler: `page` answers without a session with the login page, `api` with 401;
 * anything but GET also needs the CSRF token; `admin` answers 403 to non-admins.
 */
export function guard(
  db: Db,
  kind: 'page' | 'api',
  handler: Authed,
  opts: { admin?: boolean; methods?: string[]; onSession?: (s: WebSession) => void } = {},
): http.RequestListener {
  const methods = opts.methods ?? ['GET'];
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    try {
      if (!methods.includes(req.method ?? 'GET')) throw new HttpRefusal(405, 'method not allowed');
      const session = await sessionOf(db, req);
      if (!session) {
        if (kind === 'page') return page(res, 401, 'login');
        throw new HttpRefusal(401, 'not signed in: open a login link (`switchboard web link`)');
      }
      opts.onSession?.(session);
      if (req.method !== 'GET' && !csrfOk(req, session)) throw new HttpRefusal(403, 'missing or wrong CSRF token');
      if (opts.admin && !session.admin) {
        if (kind === 'page') return page(res, 403, 'forbidden');
        throw new HttpRefusal(403, 'admins only');
      }
      await handler(req, res, session, url);
    } catch (err) {
      if (!(err instanceof HttpRefusal)) throw err;
      if (res.headersSent) res.end();
      else json(res, err.status, { error: err.message });
    }
  };
}

/** Where the built client is: dist/web (from src/, dist/src/ or dist/bundle/src/). */
function assetDir(): string {
  const here = import.meta.url;
  const candidates = ['../../../dist/web/', '../../../web/', '../../../../web/'].map((rel) =>
    fileURLToPath(new URL(rel, here)),
  );
  return candidates.find((d) => existsSync(`${d}app.js`)) ?? candidates[0]!;
}

const TYPES: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};
const assets = new Map<string, Buffer>();

/** Serve a built client file. */
export function asset(name: 'app.js' | 'app.css'): http.RequestListener {
  return (_req, res) => {
    let body = assets.get(name);
    if (!body) {
      try {
        body = readFileSync(`${assetDir()}${name}`);
        assets.set(name, body);
      } catch {
        res.writeHead(500, { 'content-type': 'text/plain' }).end('the web client is not built: run `npm run build`\n');
        return;
      }
    }
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': TYPES[name]!, 'cache-control': 'no-cache' }).end(body);
  };
}

const NOTES: Record<string, { title: string; text: string }> = {
  login: {
    title: 'Sign in',
    text: 'Open a login link to sign in: `switchboard start` prints one, and `switchboard web link` makes another.',
  },
  forbidden: {
    title: 'Admins only',
    text: 'This page is for admins. Ask the operator for an admin link (`switchboard web link --admin`).',
  },
  used: {
    title: 'Link not valid',
    text: 'This login link was used already or has expired. Ask for a new one (`switchboard web link`).',
  },
  slowed: {
    title: 'Too many tries',
    text: 'Too many login links from this address were not valid. Wait a moment, then open yours again.',
  },
};

/** `/login` closed to an address for a while (see `login-limit.ts`): 429 with `Retry-After`, in seconds. */
export function tooManyLogins(res: http.ServerResponse, waitMs: number): void {
  res.setHeader('retry-after', String(Math.ceil(waitMs / 1000)));
  page(res, 429, 'slowed');
}

/** A page shell: the chat (`chat`), the console (`admin`), or a note (login, refusals; its commands shown as code). */
export function page(res: http.ServerResponse, status: number, which: 'chat' | 'admin' | keyof typeof NOTES): void {
  const note = NOTES[which];
  const body = note
    ? `<main class="note"><h1>${escapeText(note.title)}</h1>${markdownHtml(lexer(note.text))}</main>`
    : '<div id="root"></div><script type="module" src="/assets/app.js"></script>';
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" ` +
    `content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light ` +
    `dark"><title>switchboard${note ? ` · ${escapeText(note.title)}` : ''}</title><link rel="stylesheet" ` +
    `href="/assets/app.css"></head><body data-page="${note ? 'note' : which}">${body}</body></html>`;
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8' }).end(html);
}
