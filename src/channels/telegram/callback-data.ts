/**
 * `callback_data` of inline buttons: the shared compact action text (`delivery/action-codec.ts`,
 * which carries the row id and the choice, so a button keeps working after a restart), held to
 * Telegram's limit of 64 bytes.
 */
import { payloadCodec } from '../../kit/index.js';

/** Telegram's limit on `callback_data`, in bytes. */
export const CALLBACK_DATA_LIMIT = 64;

const codec = payloadCodec({ field: 'callback_data', platform: 'Telegram', max: CALLBACK_DATA_LIMIT, unit: 'bytes' });

/**
 * Encode a button.
 * @throws Error when the result would exceed 64 bytes or an id contains `:`.
 */
export const encodeCallback = codec.encode;

/** Decode `callback_data`; null for anything this bot did not produce. */
export const decodeCallback = codec.decode;
