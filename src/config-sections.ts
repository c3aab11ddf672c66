/**
 * Every section of the configuration, in the order the generated example and reference show
 * them. A channel with settings adds its `src/channels/<name>/config.ts` (which imports only zod
 * and `config-section.ts`) and one entry here; `config.ts` composes the schema, the environment
 * names and the cross-field checks from this list.
 */
import { discordConfig } from './channels/discord/config.js';
import { slackConfig } from './channels/slack/config.js';
import { telegramConfig } from './channels/telegram/config.js';
import { webConfig } from './channels/web/config.js';
import {
  accessConfig,
  approvalsConfig,
  audioConfig,
  deliveryConfig,
  httpConfig,
  jobsConfig,
  llmConfig,
  logConfig,
  storeConfig,
  subagentsConfig,
  workspaceConfig,
} from './config-core.js';
import { mcpConfig } from './config-mcp.js';
import { toolsConfig } from './config-tools.js';

/** The sections: the core's, then the channels'. */
export const configSections = [
  llmConfig,
  storeConfig,
  workspaceConfig,
  toolsConfig,
  approvalsConfig,
  accessConfig,
  httpConfig,
  logConfig,
  jobsConfig,
  deliveryConfig,
  audioConfig,
  subagentsConfig,
  mcpConfig,
  webConfig,
  telegramConfig,
  slackConfig,
  discordConfig,
] as const;
