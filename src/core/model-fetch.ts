/**
 * The `fetch` the model client (the openai SDK) runs on: {@link plainFetch}, plain requests over
 * `node:http`/`node:https` with keep-alive and the answer as a Node stream (see
 * `http/plain-fetch.ts` for why).
 */
import { plainFetch } from '../http/plain-fetch.js';

/** The model client's fetch. */
export const modelFetch = plainFetch;
