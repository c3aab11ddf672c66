/**
 * The web chat's browser side without a browser, over plain HTTP: sign in through a login link,
 * call the API with the session cookie and CSRF token on one kept-alive connection (as a browser
 * tab does), and read `/api/stream` like `EventSource`: every event recorded, and a dropped stream
 * reconnected after the server's `retry:` with `Last-Event-ID`, each time on a new connection.
 */
import http from 'node:http';
import { BACKEND_HEADER } from './round-robin-proxy.js';

/** One row as the page gets it (see `src/channels/web/chat-routes.ts`). */
export interface WireRow {
  id: number;
  ref: string;
  thread: string;
  pos: number;
  body: null | ({ kind: string } & Record<string, any>);
}

/** An answer from the server, and which backend answered (behind the round-robin proxy). */
export interface Answer {
  status: number;
  json: any;
  backend: number;
  headers: http.IncomingHttpHeaders;
}

/** Send one request on `agent` (its connection, kept alive). */
export function request(
  agent: http.Agent | false,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Answer> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        agent,
        method: options.method ?? 'GET',
        headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown = text;
          try {
            json = JSON.parse(text);
          } catch {
            // not JSON (a page, a redirect)
          }
          resolve({
            status: res.statusCode ?? 0,
            json,
            backend: Number(res.headers[BACKEND_HEADER] ?? -1),
            headers: res.headers,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A signed-in browser tab: its cookie, CSRF token and own kept-alive connection. */
export interface Tab {
  cookie: string;
  csrf: string;
  agent: http.Agent;
  /** GET with the cookie. */
  get(path: string): Promise<Answer>;
  /** POST JSON with the cookie and CSRF token. */
  post(path: string, body: unknown): Promise<Answer>;
}

/** Make a tab for a session cookie over `base`: its first request opens its connection. */
export function tabOf(base: string, cookie: string, csrf = ''): Tab {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const tab: Tab = {
    cookie,
    csrf,
    agent,
    get: (path) => request(agent, base + path, { headers: { cookie } }),
    post: (path, body) =>
      request(agent, base + path, { method: 'POST', headers: { cookie, 'x-csrf-token': tab.csrf }, body }),
  };
  return tab;
}

/** Open a login link on its own connection: the session cookie, and the backend that made it. */
export async function redeemLink(link: string): Promise<{ cookie: string; backend: number }> {
  const res = await request(false, link);
  if (res.status !== 303) throw new Error(`login link answered ${res.status}`);
  const cookie = String(res.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
  return { cookie, backend: res.backend };
}

/** A page's event stream: everything it got, and the rows as the page would show them. */
export interface ChatStream {
  /** Each message by reference, as it stands (a deleted one goes). */
  rows: Map<string, WireRow>;
  /** Every event, in order of arrival. */
  events: WireRow[];
  /** Signals (`event: signal`): a turn of a thread running or not. */
  signals: Array<{ thread: string; running: boolean }>;
  /** The backend each connection of the stream was served by, in order. */
  backends: number[];
  /** Resolves once the stream is connected again after a drop (or first). */
  connected(): Promise<number>;
  close(): void;
}

/** Read `/api/stream` like `EventSource` does, reconnecting with `Last-Event-ID` until closed. */
export function openStream(base: string, cookie: string): ChatStream {
  let lastId = '';
  let retryMs = 1000;
  let closed = false;
  let current: http.ClientRequest | null = null;
  let onConnect: Array<(backend: number) => void> = [];
  const stream: ChatStream = {
    rows: new Map(),
    events: [],
    signals: [],
    backends: [],
    connected: () => new Promise((resolve) => onConnect.push(resolve)),
    close() {
      closed = true;
      current?.destroy();
    },
  };
  const dispatch = (block: string) => {
    let event = 'message';
    let data = '';
    let id: string | undefined;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const name = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
      if (name === 'event') event = value;
      else if (name === 'data') data += (data ? '\n' : '') + value;
      else if (name === 'id') id = value;
      else if (name === 'retry') retryMs = Number(value);
    }
    if (id !== undefined) lastId = id;
    if (!data) return;
    if (event === 'signal') {
      stream.signals.push(JSON.parse(data) as { thread: string; running: boolean });
      return;
    }
    // `ready` (the stored rows are all sent) carries no row.
    if (event !== 'message') return;
    const row = JSON.parse(data) as WireRow;
    stream.events.push(row);
    if (row.body) stream.rows.set(row.ref, row);
    else stream.rows.delete(row.ref);
  };
  const connect = () => {
    if (closed) return;
    const headers: Record<string, string> = { cookie, accept: 'text/event-stream' };
    if (lastId) headers['last-event-id'] = lastId;
    current = http.get(`${base}/api/stream`, { agent: false, headers }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        res.on('end', again);
        return;
      }
      const backend = Number(res.headers[BACKEND_HEADER] ?? -1);
      stream.backends.push(backend);
      for (const resolve of onConnect.splice(0)) resolve(backend);
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
          dispatch(buffer.slice(0, i));
          buffer = buffer.slice(i + 2);
        }
      });
      res.on('end', again);
      res.on('error', again);
      res.on('aborted', again);
    });
    current.on('error', again);
  };
  let pending = false;
  /** The stream dropped: connect again after `retry:` (once per drop). */
  function again() {
    if (closed || pending) return;
    pending = true;
    setTimeout(() => {
      pending = false;
      connect();
    }, retryMs);
  }
  onConnect = [];
  connect();
  return stream;
}

/** The plain text of a row: a user's text, an answer's text without its HTML, a card's one line. */
export function plainText(row: WireRow): string {
  const body = row.body;
  if (!body) return '';
  if (body.kind === 'user') return String(body.text);
  if (body.kind === 'text')
    return String(body.html)
      .replace(/<[^>]*>/g, '')
      .replace(/&amp;/g, '&')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .trim();
  if (body.kind === 'card') return String(body.view?.fallback ?? '');
  return String(body.name ?? '');
}

/** A thread's rows in the order the page draws them. */
export function threadRows(stream: ChatStream, thread: string): WireRow[] {
  return [...stream.rows.values()].filter((r) => r.thread === thread).sort((a, b) => a.pos - b.pos);
}
