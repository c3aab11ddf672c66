/**
 * Button payloads: a component's `custom_id` carries the shared compact action text
 * (`delivery/action-codec.ts`, with the row id, so a button keeps working after a restart)
 * behind a prefix that marks it ours, held to Discord's 100 characters.
 */
import { payloadCodec } from '../../kit/index.js';

/** Discord's limit on `custom_id`, in characters. */
export const CUSTOM_ID_LIMIT = 100;

const codec = payloadCodec({
  field: 'custom_id',
  platform: 'Discord',
  max: CUSTOM_ID_LIMIT,
  unit: 'characters',
  prefix: 'sb:',
});

/**
 * The `custom_id` of a button.
 * @throws Error when it would be longer than 100 characters.
 */
export const encodeCustomId = codec.encode;

/** The action of a `custom_id`; null for anything this bot did not draw. */
export const decodeCustomId = codec.decode;
