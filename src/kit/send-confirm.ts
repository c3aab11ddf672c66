/**
 * A delivery's {@link ConfirmSend} for the layers of a transport below its surface. A surface is
 * handed it as an argument, but a platform SDK's own middleware (a grammY API transformer that
 * waits for a pacing slot, or out a short 429) sees only the call's method and payload: the
 * surface puts it into the options of each platform call of one post, edit or upload
 * ({@link withConfirm}), under a symbol key, which no request body carries (JSON and multipart
 * encoders read string keys only), and such a layer confirms again after a wait of its own
 * ({@link confirmOfSend}), since the claim may have been taken over meanwhile. A call made
 * without one (a command menu, an answer to a tap) has no claim to confirm.
 *
 * Not an AsyncLocalStorage: on Node 20 and 22 its first use turns on a hook for every promise of
 * the process, which cost the Telegram path about a sixth of its CPU per message (bench/telegram.ts).
 */
import type { ConfirmSend } from '../contract/surface.js';

const CONFIRM = Symbol('switchboard.confirmSend');

/** `options` (a platform call's optional parameters) carrying `confirm` for the layers below the surface. */
export function withConfirm<T extends object>(options: T, confirm: ConfirmSend | undefined): T {
  return confirm ? { ...options, [CONFIRM]: confirm } : options;
}

/** The confirmation of the delivery a platform call's `payload` was made for, if any: for a layer to call after it waited. */
export function confirmOfSend(payload: unknown): ConfirmSend | undefined {
  return typeof payload === 'object' && payload !== null
    ? (payload as { [CONFIRM]?: ConfirmSend })[CONFIRM]
    : undefined;
}
