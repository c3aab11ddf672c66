/**
 * Splits rendered mrkdwn into Slack messages that Slack accepts: at most 3000 characters per
 * section block, 50 blocks per message and 40 000 characters per message. Cuts prefer block
 * boundaries, then paragraphs, then lines; a code block cut in two is closed and re-opened so
 * each half is a valid fence on its own.
 */
import type { MrkdwnSegment } from './mrkdwn.js';

/** Slack's limits (documented on the Block Kit and chat.postMessage reference pages). */
export const SLACK_LIMITS = {
  /** Characters in one section block's text. */
  sectionChars: 3000,
  /** Blocks in one message. */
  blocksPerMessage: 50,
  /** Characters in one message. */
  messageChars: 40_000,
} as const;

/** A section block carrying mrkdwn (a type alias, so it is assignable to a loose block record). */
export type SectionBlock = {
  type: 'section';
  text: { type: 'mrkdwn'; text: string };
};

/** One message to post: the blocks and a plain fallback `text` (notifications, old clients). */
export interface SlackMessagePart {
  text: string;
  blocks: SectionBlock[];
}

/** Characters of the fallback `text`; the blocks carry the full content. */
const FALLBACK_CHARS = 3000;

/** Index ≤ `max` at which to cut `text`, avoiding the inside of `&…;` entities and `<…>` links. */
function safeCut(text: string, max: number): number {
  if (text.length <= max) return text.length;
  const window = text.slice(0, max);
  for (const sep of ['\n\n', '\n', ' ']) {
    const at = window.lastIndexOf(sep);
    if (at > max / 4) return at + sep.length;
  }
  let cut = max;
  const amp = window.lastIndexOf('&');
  if (amp >= 0 && amp > max - 6 && !window.slice(amp).includes(';')) cut = amp;
  const lt = window.lastIndexOf('<', cut - 1);
  if (lt > 0 && lt > window.lastIndexOf('>', cut - 1)) cut = lt;
  return cut > 0 ? cut : max;
}

/** Split plain mrkdwn into pieces of at most `max` characters. */
export function splitText(text: string, max: number): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const cut = safeCut(rest, max);
    const piece = rest.slice(0, cut).replace(/\s+$/, '');
    if (piece) out.push(piece);
    rest = rest.slice(cut).replace(/^\n+/, '');
  }
  if (rest.trim()) out.push(rest);
  return out;
}

/** Split a fenced code block into fenced blocks of at most `max` characters each. */
export function splitCode(fenced: string, max: number): string[] {
  const open = '```\n';
  const close = '\n```';
  const body = fenced.startsWith(open) && fenced.endsWith(close) ? fenced.slice(open.length, -close.length) : fenced;
  const room = max - open.length - close.length;
  const chunks: string[] = [];
  let current = '';
  for (const rawLine of body.split('\n')) {
    // A single line longer than a block is cut hard; code has no better boundary.
    const lines = rawLine.length > room ? splitText(rawLine, room) : [rawLine];
    for (const line of lines) {
      const candidate = current ? `${current}\n${line}` : line;
      if (candidate.length > room && current) {
        chunks.push(current);
        current = line;
      } else {
        current = candidate;
      }
    }
  }
  if (current || chunks.length === 0) chunks.push(current);
  return chunks.map((c) => `${open}${c}${close}`);
}

/** Pieces of at most `sectionChars`, each a whole paragraph, list, or valid code fence. */
function pieces(segments: MrkdwnSegment[], max: number): string[] {
  const out: string[] = [];
  for (const seg of segments) {
    if (seg.text.length <= max) out.push(seg.text);
    else if (seg.kind === 'code') out.push(...splitCode(seg.text, max));
    else out.push(...splitText(seg.text, max));
  }
  return out;
}

/**
 * Pack rendered segments into messages within Slack's limits.
 * @param limits defaults to {@link SLACK_LIMITS}; tests pass smaller ones.
 */
export function splitForSlack(segments: MrkdwnSegment[], limits: typeof SLACK_LIMITS = SLACK_LIMITS): SlackMessagePart[] {
  const sections: string[] = [];
  let current = '';
  for (const piece of pieces(segments, limits.sectionChars)) {
    const candidate = current ? `${current}\n\n${piece}` : piece;
    if (candidate.length > limits.sectionChars && current) {
      sections.push(current);
      current = piece;
    } else {
      current = candidate;
    }
  }
  if (current) sections.push(current);

  const messages: SlackMessagePart[] = [];
  let blocks: SectionBlock[] = [];
  let chars = 0;
  const flush = () => {
    if (!blocks.length) return;
    const all = blocks.map((b) => b.text.text).join('\n\n');
    const text = all.length > FALLBACK_CHARS ? `${all.slice(0, safeCut(all, FALLBACK_CHARS - 1))}…` : all;
    messages.push({ text, blocks });
    blocks = [];
    chars = 0;
  };
  for (const section of sections) {
    if (blocks.length >= limits.blocksPerMessage || chars + section.length > limits.messageChars) flush();
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: section } });
    chars += section.length;
  }
  flush();
  return messages;
}
