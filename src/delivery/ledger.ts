/**
 * Writing to the delivery ledger. Every function takes the caller's database handle, so the row
 * lands in the same transaction as the state it shows (pass the transaction). A presenter picks
 * the row up and shows it; nothing here talks to a platform.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../store/db.js';
import {
  cardRows,
  deliveryByKey,
  insertDelivery,
  rewriteCard,
  updateDeliveryContent,
  upsertDelivery,
  upsertShownDelivery,
} from '../store/repos/deliveries.js';
import { getConversation } from '../store/repos/conversations.js';
import type { Approval, Delivery, Question } from '../store/schema.js';
import { chatRootOf } from '../store/repos/subagents.js';
import { approvalContent, parseContent, questionContent } from './content.js';
import { parseRefs } from './render.js';
import { clipMiddle } from './views.js';
import type {
  ApprovalContent,
  AttachmentContent,
  DeliveryContent,
  NoticeContent,
  QuestionContent,
  TextContent,
  ToolContent,
} from '../contract/content.js';
import type { NotificationInput, TappedCard } from '../contract/core.js';

export type { NotificationInput };

/** Key of the reply streamed in one model round of a turn (stable across a crash and re-run). */
export function replyKey(turnId: string, round: number): string {
  return `reply:${turnId}:${round}`;
}

/** Key of an approval's or a question's card (one message, updated after the decision). */
export function cardKey(id: string): string {
  return `card:${id}`;
}

/**
 * Key of a copy of a card shown in another conversation than its own: a job run's cards show in
 * the chat the job reports to (`jobs/report-cards.ts`), and may be decided there.
 */
export function reportCardKey(id: string): string {
  return `card:${id}:report`;
}

/** Key of a message showing a card that none of the card's rows held until a tap on it came in. */
export function tappedCardKey(id: string, ref: string): string {
  return `card:${id}:at:${ref}`;
}

/**
 * Key of a list (`/jobs`) the ledger showed in message `ref` of `chat`, redrawn after a tap on it:
 * one row per message, so each redraw supersedes the one before.
 */
export function tappedListKey(tapped: TappedCard): string {
  return `list:${tapped.chat.channel}:${tapped.chat.chatKey}:at:${tapped.ref}`;
}

/**
 * Whether a row is a {@link tappedCardKey} copy or a {@link tappedListKey} list: it edits the one
 * message it was made for, nothing more.
 */
export function isTappedKey(key: string): boolean {
  return (key.startsWith('card:') || key.startsWith('list:')) && key.indexOf(':at:', 5) > 0;
}

/** The card content of an approval or question whose buttons it offers, else null (`open_card`). */
export function openCardOf(content: DeliveryContent | null): string | null {
  if (content?.type === 'approval')
    return content.state === 'pending' || content.state === 'awaiting_note' ? content.id : null;
  if (content?.type === 'question') return content.state === 'pending' ? content.id : null;
  return null;
}

/** Key of a tool call's status line (a re-run after a restart updates the same line). */
export function toolKey(callId: string): string {
  return `tool:${callId}`;
}

/** Key of a file a tool call sends. */
export function attachmentKey(callId: string, path: string): string {
  return `attach:${callId}:${path}`;
}

const json = (c: DeliveryContent) => JSON.stringify(c);

/**
 * Queue the final text of a reply (or, when it streamed, bring its messages to it). `shown`: the
 * chat's channel has no surface and shows the reply as an event, so the row is written delivered.
 */
export async function enqueueReply(
  db: Db,
  conversationId: string,
  key: string,
  turnId: string,
  markdown: string,
  shown = false,
): Promise<void> {
  const chat = await chatRootOf(db, conversationId);
  // A sub-agent's reply is its answer to the parent agent, not a message for the chat.
  if (chat.label !== null) return;
  const row = { conversationId, kind: 'reply' as const, key, turnId, content: json({ type: 'text', markdown }) };
  await (shown ? upsertShownDelivery(db, row) : upsertDelivery(db, row));
}

/** A streamed reply whose round ended without text: its messages (if any) are removed. */
export async function dropStreamedReply(db: Db, key: string): Promise<void> {
  await updateDeliveryContent(db, key, json({ type: 'text', markdown: '' }));
}

/**
 * What a copy of a card shows: the card as it stands, under the copy's own title (a job's card in
 * its reporting chat is labelled with the job's name).
 */
function asCopy(copy: Delivery, card: ApprovalContent | QuestionContent): ApprovalContent | QuestionContent {
  const own = parseContent(copy.content);
  if (card.type === 'approval' && own?.type === 'approval') return { ...card, label: own.label };
  if (card.type === 'question' && own?.type === 'question') return { ...card, question: own.question };
  return card;
}

/**
 * Queue a card as it stands in its own row and in every copy of it (a job's reporting chat, the
 * messages taps made known), in the caller's transaction: a card's outcome is committed with the
 * decision, so no crash can leave one of its messages offering buttons for something decided.
 */
async function showCard(db: Db, conversationId: string, card: ApprovalContent | QuestionContent): Promise<void> {
  const chat = await chatRootOf(db, conversationId);
  const key = cardKey(card.id);
  const openCard = openCardOf(card);
  await upsertDelivery(db, { conversationId: chat.id, kind: 'card', key, content: json(card), openCard });
  for (const copy of await cardRows(db, key)) {
    if (copy.idem_key !== key) await rewriteCard(db, copy.id, json(asCopy(copy, card)), openCard);
  }
}

/** Queue an approval card as it stands (a new card, or its update after a decision). */
export async function showApproval(
  db: Db,
  a: Approval,
  override?: Partial<Pick<ApprovalContent, 'state' | 'scope' | 'by' | 'note'>>,
): Promise<void> {
  await showCard(db, a.conversation_id, approvalContent(a, override));
}

/** Queue a question card as it stands. */
export async function showQuestion(
  db: Db,
  q: Question,
  override?: Partial<Pick<QuestionContent, 'state' | 'answer' | 'by'>>,
): Promise<void> {
  await showCard(db, q.conversation_id, questionContent(q, override));
}

/** The message of the first tapped copy of a card in a conversation (see {@link recordTappedCard}), if any. */
export async function tappedCardRef(db: Db, id: string, conversationId: string): Promise<string | undefined> {
  for (const row of await cardRows(db, cardKey(id))) {
    if (row.conversation_id !== conversationId || !isTappedKey(row.idem_key)) continue;
    const ref = parseRefs(row.refs)[0]?.ref;
    if (ref) return ref;
  }
  return undefined;
}

/**
 * Bring one row of a card (its own, or a copy) to `card` as it stands and queue it again; a row
 * given up after transient failures is queued again too (see `rewriteCard`).
 */
export async function rewriteCardRow(db: Db, row: Delivery, card: ApprovalContent | QuestionContent): Promise<void> {
  await rewriteCard(db, row.id, json(asCopy(row, card)), openCardOf(card));
}

/**
 * A button of a card was tapped on `tapped`: when none of the card's rows holds that message (a
 * post whose answer a crash lost, sent again since), it becomes a row of its own showing `card`,
 * so it is brought to the card's outcome like the others — now and whenever the card changes.
 * Call it in the transaction that records the decision (or with the card as it stands, for a tap
 * on a card decided already). Nothing is written for a card without rows.
 * @returns the conversation of the row written (to be delivered), or undefined when none was.
 */
export async function recordTappedCard(
  db: Db,
  tapped: TappedCard,
  card: ApprovalContent | QuestionContent,
): Promise<string | undefined> {
  const rows = await cardRows(db, cardKey(card.id));
  if (rows.length === 0 || rows.some((r) => parseRefs(r.refs).some((x) => x.ref === tapped.ref))) return undefined;
  // The row shown in the tapped chat (the card's own, or its copy in a job's reporting chat).
  let source = rows[0] as Delivery;
  for (const row of rows) {
    const conv = await getConversation(db, row.conversation_id);
    if (conv?.channel === tapped.chat.channel && conv.chat_key === tapped.chat.chatKey) {
      source = row;
      break;
    }
  }
  const content = asCopy(source, card);
  const written = await insertDelivery(db, {
    conversationId: source.conversation_id,
    kind: 'card',
    key: tappedCardKey(card.id, tapped.ref),
    content: json(content),
    openCard: openCardOf(content),
    // Nothing is known of what the message shows: any content differs, so it is edited.
    refs: JSON.stringify([{ ref: tapped.ref, shown: '' }]),
  });
  return written ? source.conversation_id : undefined;
}

/**
 * Most of a finished call's output kept on its status line, characters: more than any channel
 * shows on one (Telegram's message holds 4096), so each cuts its own share from it.
 */
export const TOOL_OUTPUT_KEPT = 4000;

/** Queue a tool's status line as it stands (running, then its outcome, with its output when it ran). */
export async function showTool(
  db: Db,
  conversationId: string,
  callId: string,
  tool: Omit<ToolContent, 'type'>,
): Promise<void> {
  // A sub-agent's steps show in its root chat as parent → child.
  const chat = await chatRootOf(db, conversationId);
  const label = chat.label === null ? tool.label : `🤖 ${chat.label} → ${tool.label}`;
  const output = tool.output?.trim() ? { output: clipMiddle(tool.output, TOOL_OUTPUT_KEPT) } : {};
  await upsertDelivery(db, {
    conversationId: chat.id,
    kind: 'status',
    key: toolKey(callId),
    content: json({ type: 'tool', ...tool, label, ...output }),
  });
}

/** Bring a tool line already queued to its outcome (no-op for a call that never showed one). */
export async function updateToolLine(
  db: Db,
  callId: string,
  name: string,
  state: ToolContent['state'],
  summary: string,
): Promise<void> {
  const row = await deliveryByKey(db, toolKey(callId));
  if (!row) return;
  const before = parseContent(row.content);
  const label = before?.type === 'tool' ? before.label : name;
  await updateDeliveryContent(db, row.idem_key, json({ type: 'tool', name, label, state, summary }));
}

/** Queue an error line for a conversation. */
export async function enqueueError(
  db: Db,
  conversationId: string,
  message: string,
  key = `error:${randomUUID()}`,
): Promise<void> {
  const chat = await chatRootOf(db, conversationId);
  const text = chat.label === null ? message : `🤖 ${chat.label}: ${message}`;
  await insertDelivery(db, {
    conversationId: chat.id,
    kind: 'error',
    key,
    content: json({ type: 'notice', level: 'error', text }),
  });
}

/**
 * Queue a message for a chat that no turn produced, once per key (a notice of the core's own).
 * @returns false when a message with this key was queued before.
 */
export async function enqueueNotice(
  db: Db,
  conversationId: string,
  key: string,
  content: TextContent | NoticeContent,
): Promise<boolean> {
  return insertDelivery(db, { conversationId, kind: 'notice', key, content: json(content) });
}

/**
 * Queue a message for a chat that no turn produced (a command's answer, a refusal, a pairing
 * request), or bring the one queued under `key` before to this content (its message is edited).
 */
export async function showNotice(
  db: Db,
  conversationId: string,
  key: string,
  content: TextContent | NoticeContent,
): Promise<void> {
  await upsertDelivery(db, { conversationId, kind: 'notice', key, content: json(content) });
}

/**
 * Redraw the message a tap was on, a list the ledger showed in its chat, as `content` (the list as
 * it stands after the tap's action): a row of its own that holds that message from the start, so
 * the presenter edits it in place and never posts it anew. A later tap on it gives the row new
 * content (a row given up after transient failures is queued again too), which supersedes this.
 */
export async function showTappedList(
  db: Db,
  conversationId: string,
  tapped: TappedCard,
  content: TextContent,
): Promise<void> {
  const key = tappedListKey(tapped);
  // Nothing is known of what the message shows: any content differs, so it is edited.
  const refs = JSON.stringify([{ ref: tapped.ref, shown: '' }]);
  if (await insertDelivery(db, { conversationId, kind: 'notice', key, content: json(content), refs })) return;
  const row = await deliveryByKey(db, key);
  if (row) await rewriteCard(db, row.id, json(content), null);
}

/** Queue a file to send. @returns false when that file was queued before (same key). */
export async function enqueueAttachment(
  db: Db,
  conversationId: string,
  key: string,
  file: Omit<AttachmentContent, 'type'>,
): Promise<boolean> {
  const chat = await chatRootOf(db, conversationId);
  return insertDelivery(db, {
    conversationId: chat.id,
    kind: 'attachment',
    key,
    content: json({ type: 'attachment', ...file }),
  });
}

/**
 * Queue a notification for a conversation. Call it inside the transaction that records what the
 * notification reports (e.g. the job occurrence), passing that transaction as `db`; the row is
 * then shown exactly when that state exists. The running core's presenter delivers it within one
 * sweep interval (`Core.deliver(conversationId)` delivers it at once).
 *
 * @returns true when queued, false when a notification with this key exists already.
 */
export async function enqueueNotification(db: Db, input: NotificationInput): Promise<boolean> {
  return insertDelivery(db, {
    conversationId: input.conversationId,
    kind: 'notification',
    key: input.key,
    content: json({ type: 'text', title: input.title, markdown: input.text }),
  });
}
