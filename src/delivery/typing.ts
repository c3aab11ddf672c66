/**
 * "Typing…" while a turn works, the same for every surface: shown only when the answer is not
 * there within {@link TYPING_DELAY_MS} (most replies arrive sooner, and the indicator would be one
 * more platform call for each of them), shown again every `Surface.typingRefreshMs` where the
 * platform's indicator fades by itself (Telegram's lasts about 5 s), and turned off when the turn
 * waits on the user or ends. The indicator is cosmetic: a failure is logged, never thrown.
 */
import type { Logger } from 'pino';
import type { Surface } from '../contract/surface.js';
import type { Conversation } from '../store/schema.js';

/** How long a turn works before the chat shows "typing…". */
export const TYPING_DELAY_MS = 1000;

/** A conversation's indicator once it is on. */
interface Shown {
  /** Resolved once: the refreshes and the "off" go where the "on" went. */
  address: Promise<unknown>;
  refresh?: NodeJS.Timeout;
}

/** The typing indicators of the conversations the presenter shows, keyed by conversation id. */
export class TypingIndicators {
  /** Indicators waiting to start (see {@link soon}). */
  private readonly pending = new Map<string, NodeJS.Timeout>();
  /** Indicators that are on. */
  private readonly shown = new Map<string, Shown>();

  constructor(private readonly log: Logger) {}

  /** Show "typing…" unless the answer comes within {@link TYPING_DELAY_MS}; nothing more while it is on or coming. */
  soon(conversation: Conversation, surface: Surface): void {
    const id = conversation.id;
    if (this.shown.has(id) || this.pending.has(id)) return;
    const timer = setTimeout(() => {
      this.pending.delete(id);
      const shown: Shown = { address: Promise.resolve().then(() => surface.address(conversation)) };
      this.shown.set(id, shown);
      void this.show(id, surface, shown);
    }, TYPING_DELAY_MS);
    timer.unref?.();
    this.pending.set(id, timer);
  }

  /** Stop "typing…"; nothing goes to the platform when it never started. */
  off(conversation: Conversation, surface: Surface): void {
    const id = conversation.id;
    const pending = this.pending.get(id);
    if (pending) clearTimeout(pending);
    this.pending.delete(id);
    const shown = this.shown.get(id);
    if (!shown) return;
    this.shown.delete(id);
    if (shown.refresh) clearInterval(shown.refresh);
    shown.address.then(
      (address) => this.call(surface, address, false),
      () => undefined, // logged by show()
    );
  }

  /** Stop every timer (shutdown); an indicator that is on fades or stays as the platform keeps it. */
  close(): void {
    for (const timer of this.pending.values()) clearTimeout(timer);
    for (const shown of this.shown.values()) if (shown.refresh) clearInterval(shown.refresh);
    this.pending.clear();
    this.shown.clear();
  }

  /** Turn the indicator on and, where the platform's fades, keep it on until {@link off}. */
  private async show(id: string, surface: Surface, shown: Shown): Promise<void> {
    let address: unknown;
    try {
      address = await shown.address;
    } catch (err) {
      this.log.debug({ err }, 'typing indicator failed');
      return;
    }
    // Turned off (or shut down) while the address was looked up: show nothing.
    if (this.shown.get(id) !== shown) return;
    this.call(surface, address, true);
    if (surface.typingRefreshMs) {
      shown.refresh = setInterval(() => this.call(surface, address, true), surface.typingRefreshMs);
      shown.refresh.unref?.();
    }
  }

  private call(surface: Surface, address: unknown, on: boolean): void {
    try {
      surface.typing(address, on);
    } catch (err) {
      this.log.debug({ err }, 'typing indicator failed');
    }
  }
}
