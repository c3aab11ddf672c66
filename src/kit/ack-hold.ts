/**
 * An event's acknowledgement held until the event is recorded. Some platforms (Slack's Events
 * API and Socket Mode) never resend an acknowledged event, and their SDKs acknowledge before any
 * listener runs, so a crash in between would lose the message. With an {@link AckHold}, a listener
 * registers the work that records its event ({@link AckHold.record}); the receiver handles the
 * event with an acknowledgement that is only noted, and sends the real one once that work settled
 * within the platform's deadline ({@link AckHold.hold}). An event not recorded by then is not
 * acknowledged at all, however close its recording is: a starved or stalled process may need
 * seconds more, and dies meanwhile as easily as at any other time. The platform sends it again,
 * and its de-duplication key takes the retry once.
 */
import { settledWithin } from '../http/webhook.js';

/** An acknowledgement as a receiver sends it, with the response the listener gave (if any). */
export type AckFn<R = unknown> = (response?: R) => Promise<void>;

/** The events being handled or recorded, by their body object, and the work recording each. */
export class AckHold {
  private readonly recordings = new WeakMap<object, Promise<unknown>>();
  /** Bodies of events being handled or recorded: none of them may be acknowledged yet. */
  private readonly unrecorded = new WeakSet<object>();

  /** @param limitMs longest an acknowledgement waits for the recording (a little under the platform's deadline) */
  constructor(readonly limitMs: number) {}

  /**
   * Whether the event of `body` is still being handled or recorded: at the platform's deadline the
   * receiver must then answer so that the event is sent again, never "taken".
   */
  awaiting(body: object): boolean {
    return this.unrecorded.has(body);
  }

  /** Register the work that records the event of `body` (a listener's call; none: nothing to wait for). */
  record(body: object, work: Promise<unknown> | undefined): void {
    if (work) this.recordings.set(body, work);
  }

  /**
   * Handle the event of `body` by `handle`, given an acknowledgement that only notes its response;
   * then send `ack` with that response once the recording registered meanwhile settled within
   * `limitMs` (by default the hold's own). Not recorded in time: no acknowledgement, and
   * {@link awaiting} stays true for the receiver's answer.
   */
  async hold<R>(
    body: object,
    handle: (ack: AckFn<R>) => Promise<void>,
    ack: AckFn<R>,
    limitMs = this.limitMs,
  ): Promise<void> {
    let requested = false;
    let response: R | undefined;
    this.unrecorded.add(body);
    let recorded = true;
    try {
      await handle(async (r?: R) => {
        requested = true;
        response = r;
      });
    } finally {
      const recording = this.recordings.get(body);
      if (recording) recorded = await settledWithin(recording, limitMs);
      if (recorded) this.unrecorded.delete(body);
      if (requested && recorded) await ack(response);
    }
  }
}
