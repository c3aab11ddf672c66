/**
 * Every channel this build knows, one line each. Adding a channel is a folder under
 * `src/channels/` that exports a {@link ChannelKind} (see `kit/kind.ts` and `docs/new-channel.md`)
 * and one line here; nothing else names it.
 */
import type { Config } from '../config.js';
import { consoleKind } from './console/kind.js';
import type { ChannelKind } from '../kit/kind.js';
import { discordKind } from './discord/kind.js';
import { slackKind } from './slack/kind.js';
import { telegramKind } from './telegram/kind.js';
import { webKind } from './web/kind.js';

/** The registered channels. */
export const channelKinds: readonly ChannelKind[] = [telegramKind, slackKind, discordKind, webKind, consoleKind];

/** The registered channel of this name, if any. */
export function channelKind(name: string): ChannelKind | undefined {
  return channelKinds.find((k) => k.name === name);
}

/** The server channels this configuration turns on, in registration order. */
export function configuredKinds(config: Config): ChannelKind[] {
  return channelKinds.filter((k) => k.configured?.(config) === true);
}
