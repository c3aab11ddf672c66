/**
 * Button payloads: a component's `custom_id` carries the shared compact action text
 * (`delivery/action-codec.ts`, with the row id, so a button keeps working after a restart)
 * behind a prefix that marks it ours, held to Discord's 100 characters.
 */

/** Discord's limit on `custom_id`, in characters. */
export const CUSTOM_ID_LIMIT = 100;
const PREFIX = 'sb:';

/**
 * The `custom_id` of a button.
 * @throws Error when it would be longer than 100 characters.
 */
export function encodeCustomId(action: Action): string {
  const id = PREFIX + encodeAction(action);
  if (id.length > CUSTOM_ID_LIMIT) throw new Error(`custom_id is ${id.length} characters, over Discord's 100: ${id}`);
  return id;
}

/** The action of a `custom_id`; null for anything this bot did not draw. */
export function decodeCustomId(id: string | undefined): Action | null {
  if (!id || id.length > CUSTOM_ID_LIMIT || !id.startsWith(PREFIX)) return null;
  return decodeAction(id.slice(PREFIX.length));
}
import { type Action, decodeAction, encodeAction } from '../../kit/index.js';
