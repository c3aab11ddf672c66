/**
 * The terminal chat's declaration (see `src/kit/kind.ts`): the local operator's own terminal.
 * `switchboard chat` and `chat --jsonl` both serve conversations of this channel; the command line
 * opens them through {@link ChannelKind.terminal}, not `switchboard start`'s channel list.
 */
import type { ChannelKind } from '../../kit/index.js';

/** The terminal chat (interactive and JSONL). */
export const consoleKind: ChannelKind = {
  name: 'console',
  local: true,
  // Loaded when a terminal chat opens: `start` without one never reads readline's chat code.
  async terminal(io) {
    if (io.jsonl) {
      const { JsonlChannel } = await import('./jsonl.js');
      return new JsonlChannel(io);
    }
    const { ConsoleChannel } = await import('./index.js');
    return new ConsoleChannel(io);
  },
};
