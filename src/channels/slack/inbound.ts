/**
 * Incoming messages. A DM is one conversation; an @mention in a channel starts one in that
 * message's thread, which later replies continue without a mention; bots are ignored. Each goes to
 * `core.receive` keyed `slack:event:<event_id>`, so Slack's retries are taken once, across restarts.
 */
import type { App } from '@slack/bolt';
import { SUGGESTED_PROMPTS } from '../../kit/index.js';
import type { ChatRef, EarlierMessage } from '../../kit/index.js';
import { eventAcks } from './ack-hold.js';
import { DM_THREADS, type SlackContext } from './context.js';
import { type SlackFileInfo, slackFile } from './files.js';

/** The fields of a `message` / `app_mention` event that matter here. */
interface MessageEvent {
  type: string;
  subtype?: string;
  channel: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  team?: string;
  files?: SlackFileInfo[];
  user_profile?: { display_name?: string; real_name?: string };
}

/** Subtypes that are still a person writing to the bot; edits, joins and bot posts are not. */
const USER_SUBTYPES = new Set(['file_share', 'thread_broadcast']);

/** Remove the bot's own mention from a message. */
export function stripMention(text: string, botUserId: string): string {
  if (!botUserId) return text.trim();
  return text
    .replace(new RegExp(`<@${botUserId}(\\|[^>]*)?>`, 'g'), '')
    .replace(/\s{2,}/g, ' ')
    .trim();
}

/** A thread's messages before the bot's first mention in it, for the core to bound and prepend (none if unreadable). */
async function earlierInThread(ctx: SlackContext, ev: MessageEvent): Promise<EarlierMessage[]> {
  if (!ev.thread_ts || ev.thread_ts === ev.ts) return [];
  try {
    const messages = await ctx.api.threadMessages(ev.channel, ev.thread_ts);
    return messages
      .filter((m) => m.ts !== ev.ts && Number(m.ts) < Number(ev.ts))
      .map((m) => ({ who: m.bot_id ? null : `<@${m.user ?? '?'}>`, text: stripMention(m.text, ctx.api.botUserId) }));
  } catch (err) {
    ctx.log.warn({ err }, 'slack: could not read the thread before the mention');
    return [];
  }
}

/** Route one message or mention to a conversation, or ignore it. */
function onMessage(
  ctx: SlackContext,
  ev: MessageEvent,
  body: { team_id?: string; event_id?: string },
  mention: boolean,
): Promise<void> | undefined {
  if (ev.bot_id || !ev.user || ev.user === ctx.api.botUserId) return;
  if (ev.subtype && !USER_SUBTYPES.has(ev.subtype)) return;
  if (!ctx.teamAllowed(body.team_id ?? ev.team)) {
    ctx.log.info({ team: body.team_id ?? ev.team }, 'slack: message from another workspace ignored');
    return;
  }
  const isDm = !mention && ev.channel_type === 'im';
  if (!isDm && !mention) {
    // Channel chatter: only replies in a thread that already is a conversation, and not
    // mentions (the app_mention event of the same message handles those).
    if (!ev.thread_ts) return;
    if (ctx.api.botUserId && (ev.text ?? '').includes(`<@${ctx.api.botUserId}`)) return;
  }
  const threadKey = isDm ? '' : (ev.thread_ts ?? ev.ts);
  const ref: ChatRef = { channel: 'slack', chatKey: ev.channel, threadKey };
  if (isDm) ctx.core.store.memo(DM_THREADS).set(ev.channel, ev.thread_ts ?? '');
  return ctx.inbound.run(`${ev.channel}/${threadKey}`, async () => {
    // Checked in the thread's queue, so a reply right after the opening mention is not missed.
    const existing = isDm ? true : await ctx.core.chats.find(ref);
    if (!isDm && !mention && !existing) return;
    // Slack was acknowledged already and will not send it again: the core tells the sender when taking it fails.
    await ctx.core.receive({
      ...ref,
      userId: ev.user as string,
      userName: ev.user_profile?.display_name || ev.user_profile?.real_name || undefined,
      text: stripMention(ev.text ?? '', ctx.api.botUserId),
      dedupKey: body.event_id ? `slack:event:${body.event_id}` : `slack:msg:${ev.channel}:${ev.ts}`,
      direct: isDm,
      acknowledged: true,
      ...(ev.files?.length ? { files: ev.files.map((f) => slackFile(f, ctx, ev.ts.replace('.', '-'))) } : {}),
      // A conversation starting mid-thread is given the thread so far (read for a known sender only).
      ...(existing ? {} : { prelude: () => earlierInThread(ctx, ev) }),
    });
  });
}

/** Register the Events API listeners. */
export function registerInbound(app: App, ctx: SlackContext): void {
  // The HTTP answer to Slack waits for the message to be recorded (see ack-hold.ts).
  for (const type of ['message', 'app_mention'] as const)
    app.event(type, async ({ event, body }) => {
      eventAcks.record(body, onMessage(ctx, event as unknown as MessageEvent, body, type === 'app_mention'));
    });
  app.event('assistant_thread_started', async ({ event, body }) => {
    const thread = (event as { assistant_thread?: { channel_id?: string; thread_ts?: string } }).assistant_thread;
    if (!thread?.channel_id || !thread.thread_ts || !ctx.teamAllowed(body.team_id)) return;
    if (body.event_id && !(await ctx.core.markInboundSeen(`slack:event:${body.event_id}`))) return;
    ctx.core.store.memo(DM_THREADS).set(thread.channel_id, thread.thread_ts);
    await ctx.api
      .setSuggestedPrompts(thread.channel_id, thread.thread_ts, SUGGESTED_PROMPTS)
      .catch((err) => ctx.log.warn({ err }, 'slack: setting suggested prompts failed'));
  });
}
