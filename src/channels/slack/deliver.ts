/**
 * Renders core events into one conversation's Slack thread: streamed text, tool lines, approval
 * and question cards (their position saved with `setCardRef`, so a restarted process can still
 * update them), notifications, errors and the assistant "thinking…" status.
 */
import type { Logger } from 'pino';
import type { CoreApi } from '../../core/api.js';
import type { CoreEvent } from '../../core/events.js';
import type { Conversation } from '../../store/schema.js';
import type { SlackApi } from './api.js';
import { approvalCard, approvalOutcome, type CardMessage, questionCard, questionOutcome } from './blocks.js';
import { escapeMrkdwn } from './mrkdwn.js';
import { type ConversationRenderer, renderParts, type SlackTarget } from './renderer.js';

/** Where a card was posted; stored as JSON in the approval/question row. */
export interface CardRef {
  channel: string;
  ts: string;
}

/** Parse a stored card reference; null when absent or not ours. */
export function parseCardRef(raw: string | null | undefined): CardRef | null {
  if (!raw) return null;
  try {
    const v = JSON.parse(raw) as Partial<CardRef>;
    return typeof v.channel === 'string' && typeof v.ts === 'string' ? { channel: v.channel, ts: v.ts } : null;
  } catch {
    return null;
  }
}

/** What rendering needs besides the renderer. */
export interface DeliverDeps {
  core: CoreApi;
  api: SlackApi;
  log: Logger;
  target: SlackTarget;
  /** A DM thread in Slack's assistant pane: gets the "is thinking…" status. */
  assistantThread: boolean;
}

function notice(text: string): CardMessage {
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] };
}

async function setStatus(deps: DeliverDeps, status: string): Promise<void> {
  if (!deps.assistantThread || !deps.target.threadTs) return;
  await deps.api
    .setStatus(deps.target.channel, deps.target.threadTs, status)
    .catch((err) => deps.log.debug({ err }, 'slack: assistant status not set'));
}

async function questionText(core: CoreApi, id: string): Promise<string | undefined> {
  const row = await core.db.selectFrom('questions').select('question').where('id', '=', id).executeTakeFirst();
  return row?.question;
}

/** Render one event; Slack failures are logged by the renderer, never thrown. */
export async function renderEvent(deps: DeliverDeps, r: ConversationRenderer, conv: Conversation, event: CoreEvent): Promise<void> {
  const { core, target } = deps;
  switch (event.type) {
    case 'delta':
      r.delta(event.text);
      return;
    case 'reply':
      return r.reply(event.text);
    case 'tool_started':
      return r.toolStarted(event.callId, event.label);
    case 'tool_output':
      // Throttled like reply text: the tool line shows the latest output line.
      r.toolOutput(event.callId, event.text);
      return;
    case 'tool_finished':
      return r.toolFinished(event.callId, event.name, event.status, event.summary);
    case 'approval_requested': {
      // Replayed after a restart: the card is still in Slack and its buttons still work.
      if (event.replay && parseCardRef(event.cardRef)) return;
      const ts = await r.post(approvalCard(event), 'approval card');
      if (ts) await core.setCardRef('approval', event.id, JSON.stringify({ channel: target.channel, ts }));
      return;
    }
    case 'approval_resolved': {
      const card = parseCardRef(event.cardRef ?? (await cardRefOf(core, 'approvals', event.id)));
      const body = approvalOutcome(event);
      if (card) return r.update(card.channel, card.ts, body, 'approval outcome');
      await r.post(body, 'approval outcome');
      return;
    }
    case 'question': {
      if (event.replay && parseCardRef(event.cardRef)) return;
      const ts = await r.post(questionCard(event), 'question card');
      if (ts) await core.setCardRef('question', event.id, JSON.stringify({ channel: target.channel, ts }));
      return;
    }
    case 'question_resolved': {
      const card = parseCardRef(event.cardRef ?? (await cardRefOf(core, 'questions', event.id)));
      const body = questionOutcome(event, await questionText(core, event.id));
      if (card) return r.update(card.channel, card.ts, body, 'question outcome');
      return;
    }
    case 'notification':
      for (const part of renderParts(event.title ? `🔔 **${event.title}**\n\n${event.text}` : `🔔 ${event.text}`)) await r.post(part, 'notification');
      return;
    case 'attachment':
      // The file was uploaded by sendFile when the tool ran; nothing more to show.
      return;
    case 'error':
      await r.post(notice(`:warning: ${escapeMrkdwn(event.message)}`), 'error');
      return;
    case 'turn_started':
      await setStatus(deps, 'is thinking…');
      return;
    case 'turn_done':
      await r.settle(event.status === 'cancelled' ? '\n\n_(stopped)_' : '');
      await r.idle();
      await setStatus(deps, '');
      return;
    default:
      deps.log.debug({ conversation: conv.id }, 'slack: unhandled event');
  }
}

/** The stored card reference, when the event did not carry one (cards posted moments ago). */
async function cardRefOf(core: CoreApi, table: 'approvals' | 'questions', id: string): Promise<string | null> {
  const row = await core.db.selectFrom(table).select('card_ref').where('id', '=', id).executeTakeFirst();
  return row?.card_ref ?? null;
}
