/**
 * A convenience a channel sets up beside its start and tries again until the platform takes it:
 * Telegram's command menu, Discord's slash command. Commands work typed without them, so a failure
 * must not stop the channel: it is warned about and the task tried again after a growing pause
 * (`src/backoff.ts`), until it succeeds or the channel stops. Runs beside the start, not in front
 * of it: a platform's own retries can take seconds.
 */
import type { Logger } from 'pino';
import { backoffMs } from '../backoff.js';
import { errorMessage } from '../errors.js';

/** Options of {@link BackgroundRetry}. */
export interface BackgroundRetryOptions {
  log: Logger;
  /** First pause before a failed task is tried again, ms; doubled after each failure. */
  firstMs: number;
  /** Longest pause between two tries, ms. */
  maxMs: number;
  /** The warning logged after a failure (with the error's message and the pause). */
  failed: string;
}

/** Runs a task in the background, again after each failure, until it succeeds or {@link stop}. */
export class BackgroundRetry {
  private timer: NodeJS.Timeout | null = null;
  private readonly abort = new AbortController();
  private stopped = false;
  private attempt: Promise<void> | null = null;

  constructor(private readonly options: BackgroundRetryOptions) {}

  /**
   * Try `task` now; on failure, again later. Never throws. `signal` is aborted at {@link stop}, so
   * a try under way ends with the channel.
   */
  start(task: (signal: AbortSignal) => Promise<unknown>): void {
    this.attempt = this.tryOnce(task, 0);
  }

  /** One try; `failures` earlier ones failed. */
  private async tryOnce(task: (signal: AbortSignal) => Promise<unknown>, failures: number): Promise<void> {
    if (this.stopped) return;
    try {
      await task(this.abort.signal);
    } catch (err) {
      if (this.stopped) return;
      const { log, firstMs, maxMs, failed } = this.options;
      const retryInMs = backoffMs(failures, firstMs, maxMs);
      log.warn({ err: { message: errorMessage(err) }, retryInMs }, failed);
      this.timer = setTimeout(() => {
        this.timer = null;
        this.attempt = this.tryOnce(task, failures + 1);
      }, retryInMs);
      this.timer.unref();
    }
  }

  /** Stop trying (the channel stops); a try under way is aborted and waited for. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.abort.abort();
    await this.attempt?.catch(() => {});
  }
}
