/**
 * A `fetch` for the HTTP clients of the SDKs (the openai SDK's model calls, grammY's Bot API
 * calls): plain requests with a byte or text body go over `node:http`/`node:https` with
 * keep-alive, and the answer is handed back as a Node stream.
 *
 * Why: Node's built-in fetch wraps every request and answer in web streams, spec-complete header
 * lists and transferable-object bookkeeping, and the node-fetch grammY brings adds its own
 * Request, Headers and body streams around `node:http`. For a streamed completion on a fast
 * endpoint, or a Bot API call answered in a millisecond, that costs more CPU than the rest of
 * the call; the SDKs need none of it (they read a body that is async-iterable or JSON, the status
 * and the headers). Anything else (form uploads, streamed request bodies, redirects) goes to the
 * built-in fetch unchanged.
 */
import http, { type IncomingMessage, type RequestOptions } from 'node:http';
import { urlToHttpOptions } from 'node:url';
import type { Readable } from 'node:stream';

/** The part of a fetch Response the SDK reads, with the body as a Node stream. */
class StreamedResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly redirected = false;
  readonly type = 'basic';
  private used = false;
  private headerList: Headers | undefined;

  constructor(
    readonly url: string,
    private readonly message: IncomingMessage,
    readonly body: Readable,
  ) {
    this.status = message.statusCode ?? 0;
    this.statusText = message.statusMessage ?? '';
    this.ok = this.status >= 200 && this.status < 300;
  }

  /**
   * Built when first read: grammY never reads them, and the first `Headers` of a process loads
   * Node's fetch implementation (undici), which a Telegram start has no other use for.
   */
  get headers(): Headers {
    if (!this.headerList) {
      const headers = new Headers();
      const raw = this.message.rawHeaders;
      for (let i = 0; i < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
      this.headerList = headers;
    }
    return this.headerList;
  }

  get bodyUsed(): boolean {
    return this.used;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  bytes(): Promise<Uint8Array> {
    return this.readAll();
  }

  async text(): Promise<string> {
    return (await this.readAll()).toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  /** The whole body, once (a second read fails, as with fetch). */
  private async readAll(): Promise<Buffer> {
    if (this.used) throw new TypeError('Body is unusable: Body has already been read');
    this.used = true;
    const chunks: Buffer[] = [];
    for await (const chunk of this.body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }
}

/** The request body as bytes or text, or `null` when it is of a kind only the built-in fetch sends. */
function plainBody(body: RequestInit['body']): string | Uint8Array | null | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return null;
}

/**
 * A `Headers` (or a class like it) rather than a record or a list of pairs. Told by its methods,
 * not by `instanceof Headers`: naming the global loads Node's fetch implementation.
 */
function isHeaderList(init: object): init is Headers {
  return !Array.isArray(init) && typeof (init as Partial<Headers>).get === 'function';
}

function headerRecord(init: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (!init) return out;
  if (isHeaderList(init)) for (const [name, value] of init) out[name] = value;
  else if (Array.isArray(init)) for (const [name, value] of init) out[String(name).toLowerCase()] = String(value);
  else for (const [name, value] of Object.entries(init)) out[name.toLowerCase()] = String(value);
  return out;
}

/** The body decompressed as the server encoded it (fetch does this; `node:http` does not). */
async function decoded(message: IncomingMessage): Promise<Readable> {
  const encoding = message.headers['content-encoding']?.trim().toLowerCase();
  if (!encoding || encoding === 'identity') return message;
  // Loaded when first needed: the request sends no Accept-Encoding, so most servers never compress.
  const { decodedBody } = await import('./decompress.js');
  return decodedBody(message, encoding);
}

/** Parsed origins (scheme, host, port) by their text: a client talks to one or two. */
const origins = new Map<string, RequestOptions>();
const MAX_ORIGINS = 64;
/** Characters a path and query keep as they are through a URL parser (no fragment, no escaping). */
const PLAIN_CHARS = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*$/;

/** Whether `node:http` may send `path` (with its query) as written: what a URL parser would leave alone. */
function plainPath(path: string): boolean {
  if (!PLAIN_CHARS.test(path)) return false;
  const q = path.indexOf('?');
  // A parser resolves dot segments in the path (not in the query).
  return !(q < 0 ? path : path.slice(0, q)).split('/').some((seg) => seg === '.' || seg === '..');
}

/**
 * The request options for `url`, from a parsed origin kept per origin and the path as written:
 * what `node:http` would derive from the string, without parsing a URL per request (a WHATWG
 * URL and its search params per call were about 1.5 % of the process under the Telegram bench).
 * Null when the URL is anything but plain (credentials, dot segments, characters a URL parser
 * would escape): then `node:http` parses the string itself, as before.
 */
function requestTarget(url: string): RequestOptions | null {
  const schemeEnd = url.indexOf('://');
  if (schemeEnd < 0) return null;
  let pathStart = url.indexOf('/', schemeEnd + 3);
  const queryStart = url.indexOf('?', schemeEnd + 3);
  if (queryStart >= 0 && (pathStart < 0 || queryStart < pathStart)) pathStart = queryStart;
  const origin = pathStart < 0 ? url : url.slice(0, pathStart);
  if (origin.includes('@')) return null;
  let path = pathStart < 0 ? '/' : url.slice(pathStart);
  if (path.startsWith('?')) path = `/${path}`;
  if (!plainPath(path)) return null;
  let base = origins.get(origin);
  if (!base) {
    let parsed: URL;
    try {
      parsed = new URL(origin);
    } catch {
      return null;
    }
    const { protocol, hostname, port } = urlToHttpOptions(parsed);
    base = { protocol, hostname, ...(port === '' || port === undefined ? {} : { port }) };
    if (origins.size >= MAX_ORIGINS) origins.clear();
    origins.set(origin, base);
  }
  return { ...base, path };
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  return new DOMException('This operation was aborted', 'AbortError');
}

/**
 * Same contract as the built-in fetch for what the SDKs send: the status, headers and body of the
 * answer; an `AbortError` when the signal fires (before the answer or while its body streams); a
 * rejection when the endpoint cannot be reached. The signal only needs `aborted`, `reason` and
 * `addEventListener`/`removeEventListener` (grammY passes a polyfilled one).
 */
export const plainFetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
  const body = plainBody(init.body);
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : null;
  const protocol = url?.slice(0, url.indexOf(':'));
  if (url === null || body === null || (protocol !== 'http' && protocol !== 'https')) return fetch(input, init);
  const signal = init.signal ?? undefined;
  if (signal?.aborted) throw abortError(signal);

  const headers = headerRecord(init.headers);
  if (body !== undefined)
    headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  // TLS is loaded only for an https endpoint (a local model server is usually plain http).
  const transport = protocol === 'https' ? (await import('node:https')).default : http;
  const message = await new Promise<IncomingMessage>((resolve, reject) => {
    const options = { method: init.method ?? 'GET', headers };
    const target = requestTarget(url);
    const req = target ? transport.request({ ...target, ...options }) : transport.request(url, options);
    const onAbort = () => {
      const err = abortError(signal as AbortSignal);
      req.destroy(err);
      reject(err);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.once('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      reject(err);
    });
    req.once('response', (res) => {
      signal?.removeEventListener('abort', onAbort);
      resolve(res);
    });
    req.end(body);
  });

  if (REDIRECTS.has(message.statusCode ?? 0) && message.headers.location) {
    // Rare for a model endpoint: let the built-in fetch follow it, with its rules for methods and bodies.
    message.resume();
    return fetch(input, init);
  }
  const stream = await decoded(message);
  if (signal) {
    // While the body streams, an abort ends it with an AbortError, as fetch's body stream does.
    const onAbort = () => {
      const err = abortError(signal);
      message.destroy(err);
      if (stream !== message) stream.destroy(err);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    stream.once('close', () => signal.removeEventListener('abort', onAbort));
    // It may have fired while the answer's decoding was being set up.
    if (signal.aborted) onAbort();
  }
  return new StreamedResponse(url, message, stream) as unknown as Response;
};
