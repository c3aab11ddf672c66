/**
 * Slack hears "taken" (an Events API request's 200, a Socket Mode envelope's ack) only once the
 * event is recorded. Bolt acknowledges before any listener runs, and Slack never resends an
 * acknowledged event, so a crash in between would lose the message. A listener registers the work
 * that records its event; the receiver waits for it (within Slack's deadline) before answering.
 * An instance killed first gets Slack's retry instead, de-duplicated by event id.
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

/** The app as a receiver sees it: an event's `ack` held until the event is recorded (or {@link HOLD_LIMIT_MS} passed). */
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
