/**
 * The terminal chat's declaration (see `../kind.ts`): the local operator's own terminal.
 * `switchboard chat` and `chat --jsonl` both serve conversations of this channel; the command line
 * opens them, not `switchboard start`.
 */
import type { ChannelKind } from '../../kit/index.js';

/** The terminal chat (interactive and JSONL). */
export const consoleKind: ChannelKind = { name: 'console', local: true };
