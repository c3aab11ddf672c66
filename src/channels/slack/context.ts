/**
 * What the Slack listeners (messages, buttons, the slash command) share: the core, the Web API,
 * configuration, and the per-thread inbound queue that keeps a thread's messages in order.
 */
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { CoreApi } from '../../contract/core.js';
import type { PathPolicy } from '../../tools/path-policy.js';
import type { SlackApi } from './api.js';
import type { SlackSurface } from './surface.js';

/** Shared state of one Slack channel instance. */
export interface SlackContext {
  /** The core; throws when the channel has not been started. */
  readonly core: CoreApi;
  readonly api: SlackApi;
  /** Where refusals and answers for one person go (see `delivery/transient.ts`). */
  readonly surface: SlackSurface;
  readonly config: Config['slack'];
  readonly log: Logger;
  readonly paths: PathPolicy;
  /** False when `slack.team_id` is set and the request comes from another workspace. */
  teamAllowed(teamId: string | undefined): boolean;
  /** Remember the assistant thread a DM conversation should reply in. */
  rememberDmThread(slackChannel: string, threadTs: string): void;
  /** Run `work` after earlier work of the same thread (per-thread order, cross-thread concurrency). */
  enqueueInbound(key: string, work: () => Promise<void>): Promise<void>;
}
