/**
 * Small pieces of a connection's plumbing: its idle timer, a bounded wait, the test for a lost
 * Streamable HTTP session, and config roots as `file://` URIs.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Root } from '@modelcontextprotocol/sdk/types.js';

/** True for the answer of a Streamable HTTP server that no longer knows our session (it restarted). */
export function isUnknownSession(err: unknown): boolean {
  if (!(err instanceof StreamableHTTPError)) return false;
  if (err.code === 404) return true;
  return err.code === 400 && /session/i.test(err.message);
}

/** The SDK's own request timeout, set out of the way where {@link IdleTimer} bounds the call. */
export const UNBOUNDED_MS = 2 ** 31 - 1;

/** Fires `onIdle` after `ms` without `touch()`; stands still while held. */
export class IdleTimer {
  private timer: NodeJS.Timeout | null = null;
  private holds = 0;
  private stopped = false;

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
  ) {
    this.arm();
  }

  touch(): void {
    if (this.holds === 0) this.arm();
  }

  hold(): () => void {
    this.holds++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.holds === 0) this.arm();
    };
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private arm(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(this.onIdle, this.ms);
  }
}

/** Race `work` against a timer; a late result is disposed of with `dispose`. */
export async function withTimeout<T>(
  work: Promise<T>,
  ms: number,
  message: string,
  dispose: (value: T) => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new Error(message));
    }, ms);
  });
  work.then(
    (v) => timedOut && dispose(v),
    () => {},
  );
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A configured root: a `file://` URI as given, or a path made into one. */
export function toRoot(entry: string): Root {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) return { uri: entry, name: entry };
  const abs = path.resolve(entry);
  return { uri: pathToFileURL(abs).href, name: path.basename(abs) || abs };
}
