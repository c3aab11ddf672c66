/**
 * The `fetch` grammY's API client runs on. A Bot API call with a JSON body (every call but an
 * upload) goes through {@link plainFetch}: one `node:http` request on a kept-alive connection and
 * the answer read as JSON, without node-fetch's Request, Headers and body streams, which cost more
 * CPU per message than the rest of a send. An upload (a multipart body grammY streams) goes to the
 * built-in fetch.
 *
 * grammY hands over the abort signal of its polyfilled AbortController (`abort-controller`); the
 * built-in fetch takes only a native signal, so the call runs on a native one that follows it.
 */
import { plainFetch } from '../../http/plain-fetch.js';

/** The signal grammY passes: what any EventTarget-based abort signal has. */
interface AbortLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
}

/** A native signal that aborts when `signal` does (the same one when it is native already). */
function nativeSignal(signal: AbortLike | null | undefined): AbortSignal | undefined {
  if (!signal || signal instanceof AbortSignal) return signal ?? undefined;
  const controller = new AbortController();
  if (signal.aborted) controller.abort();
  else signal.addEventListener('abort', () => controller.abort(), { once: true });
  return controller.signal;
}

/** `fetch` for grammY's `client.fetch` option. */
export function botFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const signal = nativeSignal(init.signal as AbortLike | null | undefined);
  const { body } = init;
  if (body === undefined || body === null || typeof body === 'string')
    return plainFetch(input, { method: init.method, headers: init.headers, body, signal });
  // An upload: grammY's multipart body is a Node stream, which the built-in fetch reads as an
  // async iterable when told the body streams (`duplex`).
  return fetch(input, { method: init.method, headers: init.headers, body, signal, duplex: 'half' } as RequestInit);
}
