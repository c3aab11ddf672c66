/**
 * Writing to the delivery ledger. Every function takes the caller's database handle, so the row
 * lands in the same transaction as the state it shows (pass the transaction). A presenter picks
 * the row up and shows it; nothing here talks to a platform.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../store/db.js';
import {
  deliveryByKey,
  insertDelivery,
  updateDeliveryContent,
  upsertDelivery,
  upsertShownDelivery,
} from '../store/repos/deliveries.js';
import type { Approval, Question } from '../store/schema.js';
import { chatRootOf } from '../store/repos/subagents.js';
import { approvalContent, parseContent, questionContent } from './content.js';
import type {
  ApprovalContent,
  AttachmentContent,
  DeliveryContent,
  NoticeContent,
  QuestionContent,
  TextContent,
  ToolContent,
} from '../contract/content.js';
import type { NotificationInput } from '../contract/core.js';

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

/** Queue an approval card as it stands (a new card, or its update after a decision). */
export async function showApproval(
  db: Db,
  a: Approval,
  override?: Partial<Pick<ApprovalContent, 'state' | 'scope' | 'by' | 'note'>>,
): Promise<void> {
  const chat = await chatRootOf(db, a.conversation_id);
  await upsertDelivery(db, {
    conversationId: chat.id,
    kind: 'card',
    key: cardKey(a.id),
    content: json(approvalContent(a, override)),
  });
}

/** Queue a question card as it stands. */
export async function showQuestion(
  db: Db,
  q: Question,
  override?: Partial<Pick<QuestionContent, 'state' | 'answer' | 'by'>>,
): Promise<void> {
  const chat = await chatRootOf(db, q.conversation_id);
  await upsertDelivery(db, {
    conversationId: chat.id,
    kind: 'card',
    key: cardKey(q.id),
    content: json(questionContent(q, override)),
  });
}

/** Queue a tool's status line as it stands (running, then its outcome). */
export async function showTool(
  db: Db,
  conversationId: string,
  callId: string,
  tool: Omit<ToolContent, 'type'>,
): Promise<void> {
  // A sub-agent's steps show in its root chat as parent → child.
  const chat = await chatRootOf(db, conversationId);
  const label = chat.label === null ? tool.label : `🤖 ${chat.label} → ${tool.label}`;
  await upsertDelivery(db, {
    conversationId: chat.id,
    kind: 'status',
    key: toolKey(callId),
    content: json({ type: 'tool', ...tool, label }),
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
