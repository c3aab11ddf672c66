/**
 * The bot's command menu (`setMyCommands`). It is a convenience — commands work typed without
 * it — so a Bot API that lacks the method (an independent or local server answering 404) or
 * refuses it for a moment (5xx) must not stop the bot: the failure is logged as a warning and
 * the call is tried again later, with a growing pause, until it succeeds or the channel stops.
 * Runs beside the start, not in front of it: the retry layer's back-off on 5xx takes seconds.
 */
import type { Api } from 'grammy';
import type { BotCommand } from 'grammy/types';
import type { Logger } from 'pino';
import { backoffMs } from '../../kit/index.js';

/** First pause before the menu is tried again, ms (then doubled each time, up to {@link MENU_RETRY_MAX_MS}; see `src/backoff.ts`). */
export const MENU_RETRY_MS = 60_000;
/** Longest pause between two tries, ms. */
export const MENU_RETRY_MAX_MS = 60 * 60_000;

/** Registers the command menu in the background, retrying after failures. */
export class CommandMenu {
  private timer: NodeJS.Timeout | null = null;
  private readonly abort = new AbortController();
  private stopped = false;
  private attempt: Promise<void> | null = null;
  /** True once Telegram accepted the menu. */
  registered = false;

  constructor(
    private readonly api: Api,
    private readonly commands: readonly BotCommand[],
    private readonly log: Logger,
    private readonly firstRetryMs = MENU_RETRY_MS,
  ) {}

  /** Try now; on failure, again later. Never throws. */
  start(): void {
    this.attempt = this.tryOnce(0);
  }

  /** One try; `failures` earlier ones failed. */
  private async tryOnce(failures: number): Promise<void> {
    if (this.stopped) return;
    try {
      // grammY types its signal after the abort-controller polyfill; Node's own is the same at run time.
      await this.api.setMyCommands(
        [...this.commands],
        undefined,
        this.abort.signal as unknown as Parameters<Api['setMyCommands']>[2],
      );
      this.registered = true;
      this.log.debug('telegram command menu registered');
    } catch (err) {
      if (this.stopped) return;
      const nextPauseMs = backoffMs(failures, this.firstRetryMs, MENU_RETRY_MAX_MS);
      this.log.warn(
        { err: { message: (err as Error).message }, retryInMs: nextPauseMs },
        'telegram: could not register the command menu (setMyCommands); commands still work when typed; trying again later',
      );
      this.timer = setTimeout(() => {
        this.timer = null;
        this.attempt = this.tryOnce(failures + 1);
      }, nextPauseMs);
      this.timer.unref();
    }
  }

  /** Stop trying (the channel stops); an attempt under way is aborted. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.abort.abort();
    await this.attempt?.catch(() => {});
  }
}
