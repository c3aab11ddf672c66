/**
 * Slack hears "taken" (the HTTP 200 of an Events API request) only once the event is recorded.
 * Bolt acknowledges events before any listener runs, so a crash between that answer and the
 * database write would lose the message: Slack does not send an acknowledged event again. A
 * listener registers the work that records an event under its request body; the HTTP receiver
 * waits for that work (bounded by Slack's deadline) before answering. An instance killed before
 * answering gets Slack's retry instead, which any instance takes and de-duplicates by event id.
 */

const recordings = new WeakMap<object, Promise<unknown>>();

/** The work that records the event of request `body` (the listener's body object). */
export function recordBeforeAck(body: object, work: Promise<unknown> | undefined): void {
  if (work) recordings.set(body, work);
}

/** The recording registered for request `body`, if a listener registered one. */
export function recordingOf(body: object): Promise<unknown> | undefined {
  return recordings.get(body);
}
