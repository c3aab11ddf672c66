/**
 * The command table as Discord's one slash command, `/switchboard <command> [args]`, registered
 * when the channel starts: a failure is warned about and tried again with a growing pause, never
 * fatal (the `/command` text in DMs and threads works without it).
 */
import type { API, RESTPutAPIApplicationCommandsJSONBody } from '@discordjs/core';
import type { Logger } from 'pino';

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

/** Registers the slash command, retrying in the background until it is taken or stopped. */
export class SlashRegistration {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly api: API,
    private readonly log: Logger,
    private readonly retryMs = RETRY_MS,
  ) {}

  /** Try now; on failure warn and try again later. */
  start(applicationId: string, delay = this.retryMs): void {
    this.api.applicationCommands
      .bulkOverwriteGlobalCommands(applicationId, slashCommands())
      .then(() => this.log.info('discord: /switchboard registered'))
      .catch((err: unknown) => {
        if (this.stopped) return;
        this.log.warn({ err, retryInMs: delay }, 'discord: registering /switchboard failed; trying again');
        this.timer = setTimeout(() => this.start(applicationId, Math.min(delay * 2, RETRY_MAX_MS)), delay);
        this.timer.unref();
      });
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
