/** What the Slack listeners (messages, buttons, the slash command) share; the channel provides it. */
import type { Logger } from 'pino';
import type { Config, ChannelCore, PathPolicy, InboundQueue } from '../../kit/index.js';
import type { SlackApi } from './api.js';
import type { SlackSurface } from './surface.js';

/** The core's memo of the assistant thread a DM's replies go to, by DM channel ('' = the top level). */
export const DM_THREADS = 'slack.dm_thread';

/** Shared state of one Slack channel instance. */
export interface SlackContext {
  /** The core; throws when the channel has not been started. */
  readonly core: ChannelCore;
  readonly api: SlackApi;
  /** Where refusals and answers for one person go (see `delivery/transient.ts`). */
  readonly surface: SlackSurface;
  readonly config: Config['slack'];
  readonly log: Logger;
  readonly paths: PathPolicy;
  /** False when `slack.team_id` is set and the request comes from another workspace. */
  teamAllowed(teamId: string | undefined): boolean;
  /** Runs a thread's messages in order, threads side by side. */
  readonly inbound: InboundQueue;
}
