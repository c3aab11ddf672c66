/**
 * The command table as Discord's one slash command, `/switchboard <command> [args]`, registered
 * when the channel starts: a failure is warned about and tried again with a growing pause, never
 * fatal (the `/command` text in DMs and threads works without it).
 */
import type { API, RESTPutAPIApplicationCommandsJSONBody } from '@discordjs/core';
import type { Logger } from 'pino';
import { BackgroundRetry } from '../../kit/index.js';

/** The last line of `/help` on Discord. */
export const HELP = 'Talk to me in a DM, or mention me in a channel (I answer in a thread there).';
/** First pause before a failed registration is tried again, ms; doubles up to {@link RETRY_MAX_MS}. */
export const RETRY_MS = 5_000;
const RETRY_MAX_MS = 10 * 60_000;

/** The slash command's definition: a command's name and its arguments. */
export function slashCommands(): RESTPutAPIApplicationCommandsJSONBody {
  return [
    {
      name: 'switchboard',
      description: 'Run a switchboard command',
      options: [
        {
          type: 3,
          name: 'command',
          description: 'The command: help lists them',
          required: true,
          // Free text rather than choices: the table may grow past Discord's 25 choices.
          max_length: 32,
        },
        { type: 3, name: 'args', description: 'Its arguments', required: false },
      ],
    },
  ];
}

/**
 * Register the slash command for `applicationId` in the background, retrying after failures; stop
 * the returned retry with the channel.
 */
export function registerSlash(api: API, applicationId: string, log: Logger, firstMs = RETRY_MS): BackgroundRetry {
  const retry = new BackgroundRetry({
    log,
    firstMs,
    maxMs: RETRY_MAX_MS,
    failed: 'discord: registering /switchboard failed; trying again',
  });
  retry.start(async (signal) => {
    await api.applicationCommands.bulkOverwriteGlobalCommands(applicationId, slashCommands(), { signal });
    log.info('discord: /switchboard registered');
  });
  return retry;
}
