/**
 * The Web API as the Slack channel's listeners use it, over the general client (which retries
 * what the WebClient retries): the bot's own ids, a thread read back for context, an assistant
 * thread's suggested prompts. Everything a person is shown goes through the surface
 * (`surface.ts`), which holds the delivery clients.
 */
import type { webApi } from '@slack/bolt';
import type { SUGGESTED_PROMPTS } from '../../kit/index.js';

/** A message of a thread as the listeners read it (`bot_id` set when a bot posted it). */
export type ThreadMessage = { ts: string; user?: string; bot_id?: string; text: string };

/** The bot's identity and the Web API reads of the Slack channel. */
export class SlackApi {
  /** Bot user id and bot id, known after `auth.test`. */
  botUserId = '';
  botId = '';
  /** The bot's workspace (a stream outside a DM names it with its recipient). */
  teamId = '';

  /** @param client general client (reads, statuses, ephemeral messages, Bolt's own calls) */
  constructor(readonly client: webApi.WebClient) {}

  /** Messages of a thread, oldest first (the parent included). */
  async threadMessages(slackChannel: string, threadTs: string, limit = 100): Promise<ThreadMessage[]> {
    const res = await this.client.conversations.replies({ channel: slackChannel, ts: threadTs, limit });
    return (res.messages ?? []).map((m) => ({ ts: m.ts ?? '', user: m.user, bot_id: m.bot_id, text: m.text ?? '' }));
  }

  /** Offer these prompts in an assistant thread (the kit's suggested prompts, as a new thread opens). */
  async setSuggestedPrompts(slackChannel: string, threadTs: string, prompts: typeof SUGGESTED_PROMPTS): Promise<void> {
    await this.client.assistant.threads.setSuggestedPrompts({
      channel_id: slackChannel,
      thread_ts: threadTs,
      prompts: prompts as [{ title: string; message: string }],
    });
  }
}
