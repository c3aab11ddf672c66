/**
 * What every platform webhook on the shared server does around its own checks: POST only, a
 * body read with a cap, secrets compared in constant time, requests that come in while their
 * channel starts held until it runs (a platform's last retry must not be refused), and an answer
 * held until the event is recorded, within the platform's deadline. The platform's own parts (the
 * Telegram secret header, Slack's signature base string, Bolt's receiver) stay in its folder.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type { Logger } from 'pino';
import { readBody } from './server.js';

/**
 * Whether a presented secret (a header's value) is the configured one. Both sides are hashed
 * first, so the comparison takes the same time whatever the length or content of either.
 */
export function sameSecret(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * The body of a webhook request as text: anything but POST is answered 405, a body over `limit`
 * bytes 413 (and logged on `log`). Undefined when the request was answered here.
 */
export async function webhookBody(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  limit: number,
  log: Logger,
): Promise<string | undefined> {
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' }).end();
    return undefined;
  }
  try {
    return (await readBody(req, limit)).toString('utf8');
  } catch (err) {
    log.warn({ err, path: req.url }, 'webhook: request body refused');
    answerPlain(res, 413, (err as Error).message);
    return undefined;
  }
}

/** Answer a webhook request with `status` and one line of plain text saying why. */
export function answerPlain(
  res: http.ServerResponse,
  status: number,
  why: string,
  headers: http.OutgoingHttpHeaders = {},
): void {
  res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(`${why}\n`);
}

/** Answer 503 with a retry hint: the platform sends the request again (its de-duplication keeps that safe). */
export function answerUnavailable(res: http.ServerResponse, why: string): void {
  answerPlain(res, 503, why, { 'retry-after': '1' });
}

/**
 * Whether `work` settled (either way) within `ms`; it is left running when not. Holds an answer
 * until an event is recorded, no longer than the platform waits.
 */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const done = work.then(
    () => true,
    () => true,
  );
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([done, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The gate of a webhook route in front of its channel. The shared server listens before the
 * channel has started; a request that comes in during the start waits for it (up to `holdMs`
 * after the request arrived) and is then handled, instead of being refused. Once the channel
 * stops, requests are refused at once (answered 503: the platform retries, on another instance
 * or after the restart).
 */
export class StartGate {
  private state: 'starting' | 'open' | 'stopped' = 'starting';
  /** Wakes the requests held while the channel starts. */
  private readonly waiting = new Set<() => void>();

  /** @param holdMs longest a request waits for the start, counted from its arrival */
  constructor(private readonly holdMs: number) {}

  /** Whether requests are handled now. */
  get isOpen(): boolean {
    return this.state === 'open';
  }

  /** Whether the channel stopped (requests are refused without waiting). */
  get isStopped(): boolean {
    return this.state === 'stopped';
  }

  /** The channel runs: held requests go on. */
  open(): void {
    this.state = 'open';
    this.wake();
  }

  /** The channel stops: held and new requests are refused. */
  close(): void {
    this.state = 'stopped';
    this.wake();
  }

  /** Wait until the channel runs; false when it stopped or did not start within the hold. */
  async admit(arrivedAt = Date.now()): Promise<boolean> {
    if (this.state !== 'starting') return this.state === 'open';
    const ms = this.holdMs - (Date.now() - arrivedAt);
    if (ms <= 0) return false;
    let wake: () => void = () => {};
    let timer: NodeJS.Timeout | undefined;
    const woken = new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
    });
    this.waiting.add(wake);
    await woken;
    clearTimeout(timer);
    this.waiting.delete(wake);
    return this.isOpen;
  }

  private wake(): void {
    for (const wake of this.waiting) wake();
    this.waiting.clear();
  }
}
