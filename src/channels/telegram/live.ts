/**
 * A message that changes while the model works (streamed reply text, a tool status line):
 * edited no more often than once per interval, rendered from the current state at the moment the
 * edit runs (so bursts of deltas coalesce), and always flushed with the final state.
 * When the rendered text outgrows one message, earlier chunks are frozen and a new message starts.
 */
import { GrammyError, type InlineKeyboard } from 'grammy';
import type { Logger } from 'pino';
import type { ChatTarget, Outbox } from './outbox.js';

/** Options of {@link LiveMessage}. */
export interface LiveMessageOptions {
  outbox: Outbox;
  target: ChatTarget;
  log: Logger;
  /** Minimum time between two updates of the message, ms (config `telegram.stream_interval_ms`, default 1000). */
  intervalMs: number;
  /** Current content as HTML chunks, each under Telegram's limit. */
  render: () => string[];
  /** Buttons on the last chunk, if any. */
  keyboard?: () => InlineKeyboard | undefined;
}

/** A throttled, self-splitting live message. */
export class LiveMessage {
  private readonly ids: number[] = [];
  private readonly shown: string[] = [];
  private timer: NodeJS.Timeout | null = null;
  private lastFlush = 0;
  private finished = false;
  private inFlight: Promise<void> | null = null;
  private dirty = false;

  constructor(private readonly opts: LiveMessageOptions) {}

  /** Message ids sent so far, one per chunk. */
  get messageIds(): readonly number[] {
    return this.ids;
  }

  /** The state changed: schedule an update no sooner than the interval allows. */
  touch(): void {
    if (this.finished) return;
    // While an update is on its way (maybe waiting out a 429), note the change and schedule
    // the next one after it, so two edits never go out back to back.
    if (this.inFlight) {
      this.dirty = true;
      return;
    }
    if (this.timer) return;
    const wait = Math.max(0, this.lastFlush + this.opts.intervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.inFlight = this.flush()
        .catch((err) => this.opts.log.warn({ err }, 'telegram live update failed'))
        .finally(() => {
          this.inFlight = null;
          if (this.dirty) {
            this.dirty = false;
            this.touch();
          }
        });
    }, wait);
  }

  /**
   * Deliver the final state (waiting out the interval first) and stop updating.
   * Resolves once the final text is on Telegram; rejects if it could not be delivered.
   */
  async finish(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.finished = true;
    if (this.inFlight) await this.inFlight;
    const wait = this.lastFlush + this.opts.intervalMs - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await this.flush();
  }

  /** Stop without a final update (the process is shutting down). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.finished = true;
  }

  private flush(): Promise<void> {
    const { outbox, target } = this.opts;
    return outbox.serial(target, async () => {
      const chunks = this.opts.render();
      const keyboard = this.opts.keyboard?.();
      try {
        for (let i = 0; i < chunks.length; i++) {
          const html = chunks[i] as string;
          const kb = i === chunks.length - 1 ? keyboard : undefined;
          const id = this.ids[i];
          if (id === undefined) {
            this.ids.push(await outbox.sendHtml(target, html, kb));
            this.shown.push(html);
          } else if (this.shown[i] !== html) {
            try {
              await outbox.editHtml(target, id, html, kb ?? null);
            } catch (err) {
              // The user deleted the message: the text must still arrive, so send it anew.
              if (!(err instanceof GrammyError && /message to edit not found/i.test(err.description))) throw err;
              this.ids[i] = await outbox.sendHtml(target, html, kb);
            }
            this.shown[i] = html;
          }
        }
        // The final text can be shorter than what streamed (rare): drop the surplus messages.
        while (this.ids.length > chunks.length && chunks.length > 0) {
          const extra = this.ids.pop() as number;
          this.shown.pop();
          await outbox.delete(target, extra);
        }
      } finally {
        this.lastFlush = Date.now();
      }
    });
  }
}
