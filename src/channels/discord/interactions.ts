/**
 * Interactions: a button tap or the slash command, acknowledged at once (Discord waits 3 s) and
 * then handled. A tap is decoded into a neutral action for the core's action router, which decides
 * who may decide; a refusal is told to the tapper alone (an ephemeral follow-up), a decision
 * updates the card through the ledger, and so does a job action the tapped `/jobs` list. The slash command runs through the command table and its
 * answer is shown to its caller alone.
 */
import {
  answerOrFailure,
  answerParts,
  type CommandAnswer,
  type CommandPlace,
  FOREIGN_BUTTON,
  latestThread,
  TAP_FAILED,
} from '../../kit/index.js';
import {
  type APIChatInputApplicationCommandInteraction,
  type APIInteraction,
  type APIMessageComponentInteraction,
  type API,
  ApplicationCommandOptionType,
  InteractionType,
  MessageFlags,
} from '@discordjs/core';
import { decodeCustomId } from './codec.js';
import { HELP } from './commands.js';
import { CHANNEL, conversationRef, type DiscordContext, displayName, refOf } from './context.js';

/** Handle one INTERACTION_CREATE. */
export async function onInteraction(ctx: DiscordContext, api: API, it: APIInteraction): Promise<void> {
  if (it.type === InteractionType.MessageComponent) return onTap(ctx, api, it);
  if (it.type === InteractionType.ApplicationCommand && it.data.name === 'switchboard')
    return onSlash(ctx, api, it as APIChatInputApplicationCommandInteraction);
}

/** The text answer to one person, as the emitter draws it. */
async function tell(ctx: DiscordContext, it: APIInteraction, answer: CommandAnswer, first = false): Promise<void> {
  const parts = answerParts(ctx.surface.emitter, answer);
  for (const [i, part] of parts.entries()) await ctx.surface.tell(it.application_id, it.token, part, first && i === 0);
}

async function onTap(ctx: DiscordContext, api: API, it: APIMessageComponentInteraction): Promise<void> {
  // The acknowledgement first: the card itself changes through the ledger, so nothing is updated here.
  await api.interactions.deferMessageUpdate(it.id, it.token);
  const user = it.member?.user ?? it.user;
  const action = decodeCustomId(it.data.custom_id);
  if (!user || !action) return tell(ctx, it, { markdown: FOREIGN_BUTTON });
  const core = ctx.core();
  const key = `${CHANNEL}:interaction:${it.id}`;
  // A decision is a conditional update (run twice, the second finds it decided): marked seen once
  // handled. Other actions (run a job now) must not run twice: marked first.
  const decides = action.kind === 'approval' || action.kind === 'question';
  if (!decides && !(await core.markInboundSeen(key))) return;
  try {
    const chat =
      (await conversationRef(core, it.channel.id, !!it.guild_id, user.id)) ?? refOf(it.channel.id, it.channel.id);
    // A list said in the chat is redrawn through the ledger after a job action; one shown to the
    // tapper alone (a slash command's answer) is not the ledger's and stays as it was.
    const redraw = ((it.message.flags ?? 0) & MessageFlags.Ephemeral) === 0;
    const outcome = await core.act(action, `${CHANNEL}:${user.id}`, {
      byName: displayName(user),
      tapped: { chat, ref: it.message.id },
      redraw,
    });
    if (decides) await core.markInboundSeen(key);
    // A decided card shows its outcome to everyone; a refusal or a job action is news for the tapper.
    if (!outcome.ok || !decides) await tell(ctx, it, { markdown: outcome.text });
  } catch (err) {
    ctx.log.error({ err }, 'discord: handling a button failed');
    await tell(ctx, it, { markdown: TAP_FAILED });
  }
}

function option(it: APIChatInputApplicationCommandInteraction, name: string): string {
  const o = it.data.options?.find((x) => x.name === name);
  return o?.type === ApplicationCommandOptionType.String ? o.value.trim() : '';
}

async function onSlash(ctx: DiscordContext, api: API, it: APIChatInputApplicationCommandInteraction): Promise<void> {
  await api.interactions.defer(it.id, it.token, { flags: MessageFlags.Ephemeral });
  const user = it.member?.user ?? it.user;
  if (!user) return;
  const core = ctx.core();
  const name = (option(it, 'command').replace(/^\//, '') || 'help').toLowerCase();
  const guild = !!it.guild_id;
  const here = await conversationRef(core, it.channel.id, guild, user.id);
  // In a guild channel itself (not a thread of the bot) a command acts on its latest thread.
  const latest = here ? null : await latestThread(core, CHANNEL, it.channel.id);
  const ref = here ?? (latest?.threadKey !== it.channel.id ? latest : null);
  const context: CommandPlace = {
    by: `${CHANNEL}:${user.id}`,
    chat: { ...(here ?? refOf(it.channel.id, it.channel.id)), threadKey: here?.threadKey ?? it.channel.id },
    ref,
    shared: guild,
    threadPerMessage: !here,
    spell: (n) => `/switchboard ${n}`,
    hint: HELP,
  };
  await core.names.remember(context.by, displayName(user));
  const answer = await answerOrFailure(core.command(name, option(it, 'args'), context), ctx.log);
  await tell(ctx, it, answer, true);
}
