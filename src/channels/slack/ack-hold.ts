/**
 * Slack hears "taken" (the HTTP 200 of an Events API request) only once the event is recorded.
 * Bolt acknowledges events before any listener runs, so a crash between that answer and the
 * database write would lose the message: Slack does not send an acknowledged event again. A
 * listener registers the work that records an event under its request body; the receiver (HTTP
 * or Socket Mode) waits for that work (bounded by Slack's deadline) before answering. An instance
 * killed before answering gets Slack's retry instead, which any instance takes and de-duplicates
 * by event id.
 */

import { type App, type ReceiverEvent, SocketModeReceiver } from '@slack/bolt';
import { settledWithin } from '../../http/webhook.js';

const recordings = new WeakMap<object, Promise<unknown>>();

/** The work that records the event of request `body` (the listener's body object). */
export function recordBeforeAck(body: object, work: Promise<unknown> | undefined): void {
  if (work) recordings.set(body, work);
}

/** Slack gives an app 3 s to acknowledge; the held acknowledgement goes out a little earlier at the latest. */
const HOLD_LIMIT_MS = 2_500;

/**
 * The app as a receiver sees it, with Events API acknowledgements held until the event is
 * recorded (or {@link HOLD_LIMIT_MS} passed), for a receiver that acknowledges through the
 * event's `ack`: the HTTP receiver's answer, or Bolt's Socket Mode receiver's envelope
 * acknowledgement (the same promise to Slack).
 */
export function holdEventAcks(app: App): App {
  const processEvent = async (event: ReceiverEvent): Promise<void> => {
    if ((event.body as { type?: unknown }).type !== 'event_callback') return app.processEvent(event);
    let requested = false;
    let response: unknown;
    const held: ReceiverEvent = {
      ...event,
      ack: async (r?: unknown) => {
        requested = true;
        response = r;
      },
    };
    try {
      await app.processEvent(held);
    } finally {
      const recording = recordings.get(event.body);
      if (recording) await settledWithin(recording, HOLD_LIMIT_MS);
      if (requested) await event.ack(response);
    }
  };
  return { processEvent } as unknown as App;
}

/** Bolt's Socket Mode receiver, acknowledging an event's envelope only once the event is recorded. */
export class RecordingSocketModeReceiver extends SocketModeReceiver {
  override init(app: App): void {
    super.init(holdEventAcks(app));
  }
}
