/**
 * The file with an approval's whole arguments, sent before its card on a platform whose card
 * cannot show them (`approval-preview.ts`). It belongs to the card's ledger row: its reference is
 * the row's first, marked `file:…`, so a retry or a later update of the card never sends it twice
 * and never edits it into the card.
 */
import type { ApprovalContent, WholeArgumentsFile } from '../contract/content.js';
import type { ConfirmSend, Surface } from '../contract/surface.js';
import type { SentRef } from './render.js';

/** How the first reference of a card row marks its file (fingerprints never hold a colon). */
const FILE_MARK = 'file:';
const SENT = `${FILE_MARK}sent`;
const REFUSED = `${FILE_MARK}refused:`;
/** Longest refusal reason kept (it is said on the card). */
const MAX_REASON = 200;

/** The file entry at the head of a card row's references, if any. */
export function fileEntryOf(refs: readonly SentRef[]): SentRef | undefined {
  const first = refs[0];
  return first?.shown.startsWith(FILE_MARK) ? first : undefined;
}

function stateOf(entry: SentRef, name: string): WholeArgumentsFile {
  return entry.shown === SENT ? { name, sent: true } : { name, sent: false, reason: entry.shown.slice(REFUSED.length) };
}

/** An approval card made ready to draw, and the file entry its row's references start with. */
export interface CardWithFile {
  content: ApprovalContent;
  entry?: SentRef;
}

/**
 * Send an approval's whole arguments as a file before its card, when the card cannot show them
 * on `surface` and the card still asks (once: a row that has the file keeps its entry), and say
 * on the content where they are. A platform that refuses the file for good, or takes no files,
 * gets a card that says so and offers no Approve.
 * @param save persists `refs` with the new entry at its head, before anything else is sent.
 * @param confirm confirmed by the caller just before; the surface calls it again after a wait of its own.
 * @throws the platform's error when it may take the file later (the row is retried; the card waits for it).
 */
export async function prepareApprovalCard(
  surface: Surface,
  address: unknown,
  content: ApprovalContent,
  refs: SentRef[],
  save: (refs: SentRef[]) => Promise<void>,
  confirm?: ConfirmSend,
): Promise<CardWithFile> {
  const file = surface.emitter.approvalFile?.(content);
  const existing = fileEntryOf(refs);
  if (!file) return existing ? { content, entry: existing } : { content };
  if (existing) return { content: { ...content, wholeFile: stateOf(existing, file.name) }, entry: existing };
  // A card decided already shows no arguments: nothing to send for it.
  if (content.state !== 'pending') return { content };
  if (!surface.uploadText)
    return { content: { ...content, wholeFile: { name: file.name, sent: false, reason: 'this chat takes no files' } } };
  let entry: SentRef;
  try {
    entry = { ref: await surface.uploadText(address, file, confirm), shown: SENT };
  } catch (err) {
    const cls = surface.classify(err);
    if (cls.kind === 'transient') throw err;
    entry = { ref: '', shown: `${REFUSED}${cls.reason.slice(0, MAX_REASON)}` };
  }
  await save([entry, ...refs]);
  return { content: { ...content, wholeFile: stateOf(entry, file.name) }, entry };
}
