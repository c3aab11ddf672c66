/**
 * The `fetch` grammY's API client runs on. A Bot API call with a JSON body (every call but an
 * upload) goes through {@link plainFetch}: one `node:http` request on a kept-alive connection and
 * the answer read as JSON, without node-fetch's Request, Headers and body streams, which cost more
 * CPU per message than the rest of a send. An upload (a multipart body grammY streams) goes to the
 * built-in fetch.
 *
 * grammY's abort signal comes from its AbortController polyfill (`abort-controller`). The
 * `node:http` path takes it as it is (it needs only `aborted` and `addEventListener`); the
 * built-in fetch of Node 24 and later refuses any signal that is not its own `AbortSignal`, so an
 * upload gets a native one that follows grammY's.
 */
import { plainFetch } from '../../kit/index.js';

/** `fetch` for grammY's `client.fetch` option. */
export function botFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const { body } = init;
  if (body === undefined || body === null || typeof body === 'string') return plainFetch(input, init);
  // An upload: grammY's multipart body is a Node stream, which the built-in fetch reads as an
  // async iterable when told the body streams (`duplex`).
  return fetch(input, { ...init, signal: nativeSignal(init.signal), duplex: 'half' } as RequestInit);
}

/** `signal` as the built-in `AbortSignal` the built-in fetch accepts: itself, or one that follows it. */
function nativeSignal(given: RequestInit['signal']): AbortSignal | undefined {
  if (!given || given instanceof AbortSignal) return given ?? undefined;
  // The type says AbortSignal; at run time it is grammY's polyfill, which has these members.
  const signal = given as Pick<AbortSignal, 'aborted' | 'reason' | 'addEventListener'>;
  const native = new AbortController();
  if (signal.aborted) native.abort(signal.reason);
  else signal.addEventListener('abort', () => native.abort(signal.reason), { once: true });
  return native.signal;
}
