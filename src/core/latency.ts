/**
 * Where a message's time goes, for the `switchboard_message_latency_seconds` histogram: each
 * stage is timed from the message's receipt, once per turn — the model request sent
 * (`model_request`), the first streamed byte from the model (`model_first_byte`), the first text
 * shown in the chat (`first_shown`) and the final text shown (`final_shown`).
 */
import type { Histogram } from 'prom-client';

/** The stages, in the order a reply passes them. */
export type LatencyStage = 'model_request' | 'model_first_byte' | 'first_shown' | 'final_shown';

/** Per conversation: when the message being answered arrived, and the stages already timed. */
export class LatencyClock {
  private readonly open = new Map<string, { receivedAt: number; seen: Set<LatencyStage>; turnEnded: boolean }>();

  constructor(private readonly histogram: Histogram<'stage'>) {}

  /** A message was queued; the first one not yet answered starts the clock. */
  received(conversationId: string, at = performance.now()): void {
    const entry = this.open.get(conversationId);
    if (!entry || entry.turnEnded) this.open.set(conversationId, { receivedAt: at, seen: new Set(), turnEnded: false });
  }

  /** A stage was reached; only the first time per message counts. The final text ends the clock. */
  mark(conversationId: string, stage: LatencyStage): void {
    const entry = this.open.get(conversationId);
    if (!entry || entry.seen.has(stage)) return;
    entry.seen.add(stage);
    this.histogram.observe({ stage }, (performance.now() - entry.receivedAt) / 1000);
    if (stage === 'final_shown') this.open.delete(conversationId);
  }

  /**
   * The turn ended. A failed or stopped one shows no final text: its clock ends here; a done one
   * waits for its reply to be shown (a channel may show it after the turn ended), until the next
   * message starts a new clock.
   */
  turnEnded(conversationId: string, status: string): void {
    const entry = this.open.get(conversationId);
    if (!entry) return;
    if (status !== 'done') this.open.delete(conversationId);
    else entry.turnEnded = true;
  }
}
