/**
 * `callback_data` of inline buttons: the shared compact action text (`delivery/action-codec.ts`,
 * which carries the row id and the choice, so a button keeps working after a restart), held to
 * Telegram's limit of 64 bytes.
 */

import { decodeAction, encodeAction } from '../../kit/index.js';
import type { Action } from '../../kit/index.js';

/** Telegram's limit on `callback_data`, in bytes. */
export const CALLBACK_DATA_LIMIT = 64;

/**
 * Encode a button.
 * @throws Error when the result would exceed 64 bytes or an id contains `:`.
 */
export function encodeCallback(action: Action): string {
  const data = encodeAction(action);
  const bytes = Buffer.byteLength(data, 'utf8');
  if (bytes > CALLBACK_DATA_LIMIT) {
    throw new Error(`callback_data is ${bytes} bytes, over Telegram's ${CALLBACK_DATA_LIMIT}: ${data}`);
  }
  return data;
}

/** Decode `callback_data`; null for anything this bot did not produce. */
export function decodeCallback(data: string | undefined): Action | null {
  // Telegram never sends more than 64 bytes; longer text is not ours.
  if (!data || Buffer.byteLength(data, 'utf8') > CALLBACK_DATA_LIMIT) return null;
  return decodeAction(data);
}
