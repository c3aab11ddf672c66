/**
 * The `fetch` grammY's API client runs on. A Bot API call with a JSON body (every call but an
 * upload) goes through {@link plainFetch}: one `node:http` request on a kept-alive connection and
 * the answer read as JSON, without node-fetch's Request, Headers and body streams, which cost more
 * CPU per message than the rest of a send. An upload (a multipart body grammY streams) goes to the
 * built-in fetch.
 *
 * grammY's abort signal comes from its AbortController polyfill (`abort-controller`): both paths
 * take it as it is (they need only `aborted` and `addEventListener`).
 */
import { plainFetch } from '../../http/plain-fetch.js';

/** `fetch` for grammY's `client.fetch` option. */
export function botFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const { body } = init;
  if (body === undefined || body === null || typeof body === 'string') return plainFetch(input, init);
  // An upload: grammY's multipart body is a Node stream, which the built-in fetch reads as an
  // async iterable when told the body streams (`duplex`).
  return fetch(input, { ...init, duplex: 'half' } as RequestInit);
}
