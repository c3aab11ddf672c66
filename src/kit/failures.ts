/**
 * What every channel's failure classifier shares: a platform's error codes looked up in a table
 * (gone, transient, else permanent), and the class of a failure that is not the platform's answer
 * (the program's own refusals, a native rendering to be made again, anything unknown).
 */
import type { FailureClass } from '../contract/surface.js';
import { SwitchboardError } from '../errors.js';
import { StepMessageGone } from './step-messages.js';

/** What a platform's error codes mean for the presenter; a code in neither set is permanent. */
export interface FailureCodes<C extends string | number = string> {
  /** The message to edit is no more (or can no longer be edited): a new post can work. */
  gone: ReadonlySet<C>;
  /** Worth another try. */
  transient?: ReadonlySet<C>;
}

/**
 * A platform's native rendering (Slack's markdown blocks, Telegram's rich messages) refused, and
 * the answer too long to go the old way as the same parts: the presenter renders it again at once,
 * now that the native way is off for the run.
 */
export class RenderAgain extends Error {}

/** Classify a platform's error code by `codes`: gone, transient, or else permanent (retrying cannot help). */
export function classifyByCodes<C extends string | number>(
  codes: FailureCodes<C>,
  code: C,
  reason: string,
): FailureClass {
  if (codes.gone.has(code)) return { kind: 'gone', reason };
  if (codes.transient?.has(code)) return { kind: 'transient', reason };
  return { kind: 'permanent', reason };
}

/**
 * Classify a failure that is not the platform's answer: a step's message gone ({@link StepMessageGone})
 * is gone, {@link RenderAgain} is tried again at once, the program's own refusal ({@link SwitchboardError})
 * is permanent; anything else is transient — `unanswered` when a post may have landed all the same.
 */
export function classifyOwn(err: unknown, unanswered = false): FailureClass {
  if (err instanceof StepMessageGone) return { kind: 'gone', reason: err.message };
  if (err instanceof RenderAgain) return { kind: 'transient', reason: err.message, retryAfterMs: 0 };
  if (err instanceof SwitchboardError) return { kind: 'permanent', reason: err.message };
  const reason = err instanceof Error ? err.message : String(err);
  return unanswered ? { kind: 'transient', reason, unanswered } : { kind: 'transient', reason };
}
