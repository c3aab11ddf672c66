/**
 * A tool line's reference when it is a task of a shared streamed message (`task-stream.ts`):
 * `<ts>#<task id>`, and what the surface asks of those streams. Apart so the surface depends on
 * no stream code.
 */

/** Where an address is, as task streams read it (a {@link SlackAddress} fits). */
interface Where {
  slackChannel: string;
  threadTs?: string;
}

/** Tool lines as tasks of a shared streamed message, as the surface drives them. */
export interface TaskLines<A extends Where = Where> {
  /** Whether a tool line to this address goes into a steps message now. */
  usable(address: A): boolean;
  /** Show a tool line (its task card block) as a task. @returns its reference, or null: post it the old way. */
  post(address: A, card: Record<string, unknown>): Promise<string | null>;
  /** Bring a task up to date. @throws TaskMessageGone when its message must be posted anew. */
  edit(address: A, ref: { ts: string; id: string }, card: Record<string, unknown>): Promise<void>;
  /** Stop the thread's open steps message: something else comes below it. */
  close(address: A): Promise<void>;
}

/** The update of a task whose message this process knows nothing of, and Slack no longer streams: post it anew. */
export class TaskMessageGone extends Error {}

/** A tool line's reference: the steps message and the task in it, or null for an ordinary `ts`. */
export function parseTaskRef(ref: string): { ts: string; id: string } | null {
  const at = ref.indexOf('#');
  return at < 0 ? null : { ts: ref.slice(0, at), id: ref.slice(at + 1) };
}
