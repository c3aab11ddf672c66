/**
 * What an approval card shows of a call's arguments: the tool's whole preview with every
 * invisible or direction-changing character marked (`visible.ts`), never folded. When that does
 * not fit the platform's card (`CardLimits.previewChars`), the card shows a beginning cut at a
 * marked place and the whole text goes beside it as a text file; where no file can go, the card
 * offers no Approve (`cards.ts`). Nothing that runs is left unshown.
 */
import type { OutboundText } from '../contract/chat.js';
import type { ApprovalContent } from '../contract/content.js';
import type { CardLimits } from './views.js';
import { cutVisible, MARK_CLOSE, MARK_OPEN, visibleText } from './visible.js';

/** The preview as a card draws it: whole, or a beginning and what was left out. */
export interface ShownPreview {
  /** The text of the card's code block (with the cut mark as its last line when cut). */
  code: string;
  /** Set when the card does not show everything. */
  cut?: { restChars: number; restLines: number; totalChars: number };
}

/** The units a preview takes on a platform. */
function measureOf(limits: CardLimits): (text: string) => number {
  return limits.measure ?? ((text) => text.length);
}

/** Numbers as people read them (`12 345`), in every locale the same. */
function count(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
}

/** The last line of a cut preview: a mark (only marks start with `⟨`), so no text can fake it. */
export function cutMark(restChars: number, restLines: number): string {
  const lines = restLines > 0 ? ` on ${count(restLines + 1)} lines` : '';
  return `${MARK_OPEN}… ${count(restChars)} more characters${lines} not shown on this card${MARK_CLOSE}`;
}

/** The preview of an approval, as the card of a platform with `limits` shows it. */
export function shownPreview(preview: string, limits: CardLimits): ShownPreview {
  const visible = visibleText(preview);
  const measure = measureOf(limits);
  // Every platform's measure is at least the length: a longer text cannot fit, and is not measured whole.
  if (visible.length <= limits.previewChars && measure(visible) <= limits.previewChars) return { code: visible };
  // Room for the cut mark at its longest (every character and line left out).
  const longest = cutMark(visible.length, (visible.match(/\n/g) ?? []).length);
  // Nor can a head longer than the limit: only the beginning is searched.
  const cut = cutVisible(visible, (head) => measure(`${head}\n${longest}`) <= limits.previewChars, limits.previewChars);
  return {
    code: `${cut.head}\n${cutMark(cut.restChars, cut.restLines)}`,
    cut: { restChars: cut.restChars, restLines: cut.restLines, totalChars: visible.length },
  };
}

/** The name of the file with an approval's whole arguments. */
export function wholeFileName(approvalId: string): string {
  return `approval-${approvalId.slice(0, 8)}-arguments.txt`;
}

/**
 * The whole arguments of an approval as a text file, for a platform whose card cannot show them
 * (`limits`); undefined when the card shows everything. The text is marked as on the card, so a
 * text viewer cannot reorder or hide any of it either.
 */
export function approvalFile(content: ApprovalContent, limits: CardLimits): OutboundText | undefined {
  if (!shownPreview(content.preview, limits).cut) return undefined;
  const header = [
    `Approval ${content.id}: ${visibleText(content.label)}`,
    `The whole arguments of this tool call. Characters that print nothing, move the cursor or change the ` +
      `text's direction are written as ${MARK_OPEN}…${MARK_CLOSE} marks (${MARK_OPEN}TAB${MARK_CLOSE}, ` +
      `${MARK_OPEN}ESC${MARK_CLOSE}, ${MARK_OPEN}U+202E RLO${MARK_CLOSE}); a ${MARK_OPEN} of the text ` +
      `itself is ${MARK_OPEN}U+27E8${MARK_CLOSE}.`,
    '',
  ].join('\n');
  return {
    name: wholeFileName(content.id),
    text: `${header}\n${visibleText(content.preview)}\n`,
    caption: 'The whole arguments of the approval card below.',
  };
}
