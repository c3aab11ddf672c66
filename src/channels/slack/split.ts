/**
 * Slack's side of splitting: its limits, and mrkdwn as the shared cutter's pieces (characters;
 * escapes and links whole; a code fence closed and reopened at a cut). The packing and cutting
 * are shared (`delivery/split.ts`, `delivery/cut.ts`).
 */
import { angleMarkup, cutMarkup, groupParts, packBlocks } from '../../kit/index.js';
import type { Piece, Markup, MessageLimits } from '../../kit/index.js';
import type { MrkdwnSegment } from './mrkdwn.js';

/** Slack's limits (Block Kit and chat.postMessage references): characters of a section's text, blocks and characters of a message. */
export const SLACK_LIMITS = { sectionChars: 3000, blocksPerMessage: 50, messageChars: 40_000 } as const;

/** {@link SLACK_LIMITS} as the packer reads them: a part is one section block. */
export const slackLimits: MessageLimits = {
  partUnits: SLACK_LIMITS.sectionChars,
  partsPerMessage: SLACK_LIMITS.blocksPerMessage,
  messageUnits: SLACK_LIMITS.messageChars,
};

/** A section block carrying mrkdwn (a type alias, so it is assignable to a loose block record). */
export type SectionBlock = { type: 'section'; text: { type: 'mrkdwn'; text: string } };

/** One message to post: the blocks and a plain fallback `text` (notifications, old clients). */
export interface SlackMessagePart {
  text: string;
  blocks: SectionBlock[];
}

/** Characters of the fallback `text`; the blocks carry the full content. */
const FALLBACK_CHARS = 3000;

const FENCE = { open: '```\n', close: '\n```' };

/** Escapes and links (`<…>`) are never cut inside; Slack counts every character. */
const textPieces = angleMarkup({ tags: false });

/** A fenced code block as pieces: the fences open and close it, so a cut closes and reopens them. */
function codePieces(fenced: string): Piece[] {
  const body =
    fenced.startsWith(FENCE.open) && fenced.endsWith(FENCE.close)
      ? fenced.slice(FENCE.open.length, -FENCE.close.length)
      : fenced;
  return [
    { kind: 'open', name: 'fence', raw: FENCE.open, closer: FENCE.close },
    ...textPieces(body),
    { kind: 'close', name: 'fence', raw: FENCE.close },
  ];
}

/** Split plain mrkdwn into pieces of at most `max` characters. */
export function splitText(text: string, max: number): string[] {
  // Outside a code block whitespace at a cut shows as nothing: drop it.
  return cutMarkup(text, max, textPieces).map((piece) => piece.replace(/\s+$/, ''));
}

/** Split a fenced code block into fenced blocks of at most `max` characters each (fences included). */
export function splitCode(fenced: string, max: number): string[] {
  // The cutter does not count the fences, which every piece carries: leave room for them.
  return cutMarkup(fenced, max - FENCE.open.length - FENCE.close.length, codePieces);
}

/**
 * mrkdwn cut to at most `max` characters, ending in "…", at the shared cutter's place (a blank
 * line, a line, a space; never inside an escape or a link); text within `max` is returned as it is.
 */
export function clipMrkdwn(text: string, max: number): string {
  if (text.length <= max) return text;
  // The first piece never reaches past twice its size (a link that long is cut like text): read no further.
  return `${splitText(text.slice(0, 2 * max), max - 1)[0] ?? ''}…`;
}

/** mrkdwn segments for the packer: measured in characters, code cut with its fence reopened. */
const mrkdwn: Markup<MrkdwnSegment> = {
  measure: (seg) => seg.text.length,
  join: (a, b) => (a.text ? { kind: 'text', text: `${a.text}\n\n${b.text}` } : b),
  separatorUnits: 2,
  cut: (seg, max) =>
    (seg.kind === 'code' ? splitCode(seg.text, max) : splitText(seg.text, max)).map((text) => ({
      kind: seg.kind,
      text,
    })),
};

/**
 * Pack rendered segments into messages within Slack's limits.
 * @param limits defaults to {@link slackLimits}; tests pass smaller ones.
 */
export function splitForSlack(segments: MrkdwnSegment[], limits: MessageLimits = slackLimits): SlackMessagePart[] {
  const sections = packBlocks(segments, limits.partUnits, mrkdwn)
    .map((seg) => seg.text)
    .filter((text) => text !== '');
  return groupParts(sections, limits, (s) => s.length).map((group) => {
    const text = clipMrkdwn(group.join('\n\n'), FALLBACK_CHARS);
    return { text, blocks: group.map((s): SectionBlock => ({ type: 'section', text: { type: 'mrkdwn', text: s } })) };
  });
}
