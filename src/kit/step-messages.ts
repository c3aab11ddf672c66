/**
 * Steps messages: the tool calls of a turn in a row shown as steps of one streamed message per
 * thread, instead of a message each. This is the bookkeeping a platform with such streams needs:
 * the open message of each thread (closed when something else comes below it, or once it is older
 * than the platform keeps streams open), its steps by id, and the messages known by reference
 * (open and recently closed) so a step's update is appended while the message streams and
 * redrawn whole once it no longer does. A step's reference is `<message ref>#<step id>`
 * ({@link parseStepRef}). After a restart nothing is known of a message: the step's update is
 * its last word, stopping the stream with it while the platform keeps it open, else
 * {@link StepMessageGone} (the presenter posts the line anew). A platform that may refuse steps
 * (a workspace without them) says what a refusal looks like: steps are then off for the rest of
 * the run, logged once, and each line is shown the ordinary way ({@link StepMessages.native}).
 * Platform-neutral: the channel says how to start, append to, stop and redraw its streamed
 * messages, and what a step looks like.
 */
import type { Logger } from 'pino';
import { NativeFallback, type NativeFallbackOptions } from '../delivery/native-fallback.js';

/** A platform's streamed messages as steps messages use them; `S` is a step as the platform sends it. */
export interface StepStream<A, S> {
  /** Start a streamed message with its first step. @returns its reference, or null where it cannot stream. */
  start(address: A, step: S): Promise<string | null>;
  /** Append steps, stopping the stream with them when `stop`. @returns false when it no longer streams. */
  append(address: A, ref: string, steps: S[], stop?: boolean): Promise<boolean>;
  /** Stop a streamed message. */
  stop(address: A, ref: string): Promise<void>;
  /** Draw a message whose stream ended anew, whole, with these steps. */
  redraw(address: A, ref: string, steps: S[]): Promise<void>;
}

/** Options of {@link StepMessages}. */
export interface StepMessagesOptions<A, S> {
  stream: StepStream<A, S>;
  /** The thread an address is in: one open steps message each. */
  thread(address: A): string;
  /** A steps message older than this goes on in a new one, ms. */
  rolloverMs: number;
  log: Logger;
  now?: () => number;
  /** How the platform refuses steps, and the warning logged once when it does; none: never refused. */
  refused?: Pick<NativeFallbackOptions, 'message' | 'refusal'>;
}

/** The update of a step whose message this process knows nothing of, and that no longer streams: post it anew. */
export class StepMessageGone extends Error {}

/** A step's reference: the steps message and the step in it, or null for an ordinary message reference. */
export function parseStepRef(ref: string): { ts: string; id: string } | null {
  const at = ref.indexOf('#');
  return at < 0 ? null : { ts: ref.slice(0, at), id: ref.slice(at + 1) };
}

/** Messages whose steps are remembered after their stream closed, for a redraw. */
const KNOWN_MAX = 200;

interface Message<S> {
  ts: string;
  startedAt: number;
  open: boolean;
  /** Its steps by id, in order. */
  steps: Map<string, S>;
}

/** Steps of shared streamed messages (see the module's note). */
export class StepMessages<A, S> {
  /** The open steps message of each thread. */
  private readonly open = new Map<string, Message<S>>();
  /** Steps messages by reference (open and recently closed), for updates and redraws. */
  private readonly known = new Map<string, Message<S>>();
  /** Steps, until the platform refuses them (see {@link StepMessagesOptions.refused}). */
  readonly native: NativeFallback;

  constructor(private readonly options: StepMessagesOptions<A, S>) {
    const refused = options.refused ?? { message: '', refusal: () => undefined };
    this.native = new NativeFallback({ enabled: true, log: options.log, ...refused });
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /**
   * Add a step to the thread's open steps message, or start one for a step still `running`.
   * @param step the step with the id it is given
   * @returns its reference, or null: show it the ordinary way (also once the platform refused steps).
   */
  post(address: A, step: (id: string) => S, running: boolean): Promise<string | null> {
    return this.native.run(true, async (native) => (native ? this.add(address, step, running) : null));
  }

  private async add(address: A, step: (id: string) => S, running: boolean): Promise<string | null> {
    const { stream } = this.options;
    const thread = this.options.thread(address);
    let message = this.open.get(thread);
    if (message && this.now() - message.startedAt >= this.options.rolloverMs) {
      await this.close(address);
      message = undefined;
    }
    if (message) {
      const id = `t${message.steps.size + 1}`;
      const added = step(id);
      if (await stream.append(address, message.ts, [added])) {
        message.steps.set(id, added);
        return `${message.ts}#${id}`;
      }
      // Expired meanwhile: the next step opens a new message.
      message.open = false;
      this.open.delete(thread);
    }
    // A finished call does not open a stream of its own.
    if (!running) return null;
    const first = step('t1');
    const ts = await stream.start(address, first);
    if (ts === null) return null;
    const started: Message<S> = { ts, startedAt: this.now(), open: true, steps: new Map([['t1', first]]) };
    this.open.set(thread, started);
    this.known.set(ts, started);
    if (this.known.size > KNOWN_MAX) this.known.delete(this.known.keys().next().value as string);
    return `${ts}#t1`;
  }

  /** Bring a step up to date. @throws StepMessageGone when its message must be posted anew. */
  async edit(address: A, ref: { ts: string; id: string }, step: S): Promise<void> {
    const { stream } = this.options;
    const message = this.known.get(ref.ts);
    if (!message) {
      // Nothing known (a restart): the platform may still keep it open; the step's last word stops it.
      if (await stream.append(address, ref.ts, [step], true)) return;
      throw new StepMessageGone(`the steps message ${ref.ts} no longer streams`);
    }
    message.steps.set(ref.id, step);
    if (message.open && (await stream.append(address, message.ts, [step]))) return;
    if (message.open) {
      message.open = false;
      const thread = this.options.thread(address);
      if (this.open.get(thread) === message) this.open.delete(thread);
    }
    await stream.redraw(address, message.ts, [...message.steps.values()]);
  }

  /** Stop the thread's open steps message: something else comes below it. */
  async close(address: A): Promise<void> {
    const thread = this.options.thread(address);
    const message = this.open.get(thread);
    if (!message) return;
    this.open.delete(thread);
    message.open = false;
    await this.options.stream
      .stop(address, message.ts)
      .catch((err: unknown) => this.options.log.debug({ err }, 'stopping a steps message failed'));
  }
}
