/**
 * Slack hears "taken" (an Events API request's 200, a Socket Mode envelope's ack) only once the
 * event is recorded. Bolt acknowledges before any listener runs, and Slack never resends an
 * acknowledged event, so a crash in between would lose the message. A listener registers the work
 * that records its event; the receiver waits for it (within Slack's deadline) before answering.
 * An event not recorded by then is not acknowledged at all, however close its recording is: a
 * starved or stalled process may need seconds more, and dies meanwhile as easily as at any other
 * time. Slack sends it again (the HTTP receiver answers 503 at the deadline; an unacknowledged
 * envelope is resent), and the retry is taken once, de-duplicated by event id.
 */
import { type App, type ReceiverEvent, SocketModeReceiver } from '@slack/bolt';
import { settledWithin } from '../../kit/index.js';

const recordings = new WeakMap<object, Promise<unknown>>();
/** Bodies of events being handled or recorded: none of them may be acknowledged yet. */
const unrecorded = new WeakSet<object>();

/**
 * Whether the event of request `body` is still being handled or recorded: at Slack's deadline
 * the receiver must then answer so that Slack sends it again, never "taken".
 */
export function awaitingRecord(body: object): boolean {
  return unrecorded.has(body);
}

/** The work that records the event of request `body` (the listener's body object). */
export function recordBeforeAck(body: object, work: Promise<unknown> | undefined): void {
  if (work) recordings.set(body, work);
}

/** Slack gives an app 3 s to acknowledge; the held acknowledgement goes out a little earlier at the latest. */
export const HOLD_LIMIT_MS = 2_500;

/**
 * The app as a receiver sees it: an event's `ack` held until the event is recorded (or
 * `holdLimitMs`, by default {@link HOLD_LIMIT_MS}, passed; tests give a shorter one).
 */
export function holdEventAcks(app: App, holdLimitMs = HOLD_LIMIT_MS): App {
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
    unrecorded.add(event.body);
    let recorded = true;
    try {
      await app.processEvent(held);
    } finally {
      const recording = recordings.get(event.body);
      if (recording) recorded = await settledWithin(recording, holdLimitMs);
      // Not recorded in time: no acknowledgement, so Slack sends the event again.
      if (recorded) unrecorded.delete(event.body);
      if (requested && recorded) await event.ack(response);
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
