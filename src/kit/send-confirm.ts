/**
 * A delivery's {@link ConfirmSend} for the layers of a transport below its surface. A surface is
 * handed it as an argument, but a platform SDK's own middleware (a grammY API transformer that
 * waits for a pacing slot, or out a short 429) is not: the surface runs the platform calls of one
 * post, edit or upload under it ({@link sendingUnder}), and such a layer confirms again after a
 * wait of its own ({@link confirmOfSend}), since the claim may have been taken over meanwhile. A
 * call made under none (a command menu, an answer to a tap) has no claim to confirm.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ConfirmSend } from '../contract/surface.js';

const current = new AsyncLocalStorage<ConfirmSend>();

/** Run `send` (a surface's platform calls for one post, edit or upload) with `confirm` for the layers below it. */
export function sendingUnder<T>(confirm: ConfirmSend | undefined, send: () => Promise<T>): Promise<T> {
  return confirm ? current.run(confirm, send) : send();
}

/** The confirmation of the delivery whose platform call runs here, if any: for a layer to call after it waited. */
export function confirmOfSend(): ConfirmSend | undefined {
  return current.getStore();
}
