/**
 * Slack hears "taken" (an Events API request's 200, a Socket Mode envelope's ack) only once the
 * event is recorded: Bolt acknowledges before any listener runs, and Slack never resends an
 * acknowledged event. The bookkeeping is the kit's {@link AckHold}; here are Slack's deadline and
 * the places Bolt hands events over. An event not recorded in time is sent again by Slack (the
 * HTTP receiver answers 503 at the deadline; an unacknowledged envelope is resent), and the retry
 * is taken once, de-duplicated by event id.
 */
import { type App, type ReceiverEvent, SocketModeReceiver } from '@slack/bolt';
import { AckHold } from '../../kit/index.js';

/** Slack gives an app 3 s to acknowledge; the held acknowledgement goes out a little earlier at the latest. */
export const HOLD_LIMIT_MS = 2_500;

/** The events of this process being handled or recorded (listeners register their recording here). */
export const eventAcks = new AckHold(HOLD_LIMIT_MS);

/**
 * The app as a receiver sees it: an event's `ack` held until the event is recorded (or
 * `holdLimitMs`, by default {@link HOLD_LIMIT_MS}, passed; tests give a shorter one).
 */
export function holdEventAcks(app: App, holdLimitMs = HOLD_LIMIT_MS): App {
  const processEvent = (event: ReceiverEvent): Promise<void> =>
    (event.body as { type?: unknown }).type === 'event_callback'
      ? eventAcks.hold(event.body, (ack) => app.processEvent({ ...event, ack }), event.ack, holdLimitMs)
      : app.processEvent(event);
  return { processEvent } as unknown as App;
}

/** Bolt's Socket Mode receiver, acknowledging an event's envelope only once the event is recorded. */
export class RecordingSocketModeReceiver extends SocketModeReceiver {
  override init(app: App): void {
    super.init(holdEventAcks(app));
  }
}
