/**
 * Approval and question cards: their HTML, their buttons, and the texts they turn into once
 * resolved. Pure functions, so the wording is tested without a bot.
 */
import { InlineKeyboard } from 'grammy';
import { encodeCallback } from './callback-data.js';
import { escapeHtml } from './markdown.js';

/** Longest preview shown on a card (characters); the card must stay far under 4096. */
export const PREVIEW_LIMIT = 1500;

/** Trim text to `max` characters, marking the cut. */
export function trimText(text: string, max: number): string {
  const t = text.trim();
  return t.length <= max ? t : `${t.slice(0, max - 1)}…`;
}

/** Display name of a principal (`telegram:42` → a known name, else the id). */
export type NameOf = (principal: string | null | undefined) => string;

/** The card asking for approval of one tool call. */
export function approvalCardHtml(label: string, preview: string): string {
  const body = preview.trim() ? `\n<pre>${escapeHtml(trimText(preview, PREVIEW_LIMIT))}</pre>` : '';
  return `🔐 <b>Approval needed</b>\n${escapeHtml(trimText(label, 200))}${body}`;
}

/** ✅ Approve · ❌ Deny / 🔁 This session · ♾ Always: what it covers. */
export function approvalKeyboard(id: string, alwaysCovers?: string): InlineKeyboard {
  return new InlineKeyboard()
    .text('✅ Approve', encodeCallback({ kind: 'approval', id, choice: 'once' }))
    .text('❌ Deny', encodeCallback({ kind: 'approval', id, choice: 'deny' }))
    .row()
    .text('🔁 This session', encodeCallback({ kind: 'approval', id, choice: 'session' }))
    .text(alwaysCovers ? `♾ Always: ${trimText(alwaysCovers, 48)}` : '♾ Always', encodeCallback({ kind: 'approval', id, choice: 'always' }));
}

/** The single "No note" button shown while a denial waits for its note. */
export function noNoteKeyboard(id: string): InlineKeyboard {
  return new InlineKeyboard().text('No note', encodeCallback({ kind: 'approval', id, choice: 'no_note' }));
}

const SCOPE_TEXT: Record<string, string> = { once: 'once', session: 'for this session', always: 'always' };

/** The card after a decision: outcome and who decided; no buttons (except while awaiting a note). */
export function resolvedApprovalHtml(
  label: string,
  decision: 'approved' | 'denied' | 'expired' | 'cancelled' | 'awaiting_note',
  scope: string | null,
  by: string,
  note?: string | null,
): string {
  const head = escapeHtml(trimText(label, 200));
  switch (decision) {
    case 'approved':
      return `✅ <b>Approved</b> ${escapeHtml(SCOPE_TEXT[scope ?? 'once'] ?? '')} by ${escapeHtml(by)}\n${head}`;
    case 'denied':
      return `❌ <b>Denied</b> by ${escapeHtml(by)}\n${head}${note ? `\nNote: ${escapeHtml(trimText(note, 500))}` : ''}`;
    case 'awaiting_note':
      return `❌ <b>Denied</b> by ${escapeHtml(by)}\n${head}\nSend one message with a note for the model, or tap “No note”.`;
    case 'expired':
      return `⌛ <b>Expired</b>\n${head}`;
    case 'cancelled':
      return `⏹ <b>Cancelled</b>\n${head}`;
  }
}

/** The card of a clarification question. */
export function questionCardHtml(question: string): string {
  return `❓ ${escapeHtml(trimText(question, 3000))}\n<i>Tap an answer or reply with text.</i>`;
}

/** One button per suggested answer (button text trimmed; the full answer is looked up by index). */
export function questionKeyboard(id: string, answers: string[]): InlineKeyboard | undefined {
  if (answers.length === 0) return undefined;
  const kb = new InlineKeyboard();
  answers.slice(0, 20).forEach((a, index) => {
    kb.text(trimText(a, 60) || `Option ${index + 1}`, encodeCallback({ kind: 'question', id, index })).row();
  });
  return kb;
}

/** The question card once answered, superseded or cancelled. */
export function resolvedQuestionHtml(
  question: string,
  status: 'answered' | 'superseded' | 'cancelled',
  answer: string | null,
  by: string,
): string {
  const q = `❓ ${escapeHtml(trimText(question, 3000))}`;
  if (status === 'answered') return `${q}\n✅ ${escapeHtml(trimText(answer ?? '', 500))} — ${escapeHtml(by)}`;
  if (status === 'superseded') return `${q}\n<i>Superseded by a newer question.</i>`;
  return `${q}\n<i>Cancelled.</i>`;
}

