/**
 * Slack's side of splitting: its limits, and mrkdwn as the shared cutter's pieces (characters;
 * escapes and links whole). The packing and cutting, a code fence closed and reopened at a cut,
 * are shared (`delivery/split.ts`, `delivery/fenced-markup.ts`).
 */
import { angleMarkup, clipCut, fencedMarkup, groupParts, packBlocks } from '../../kit/index.js';
import type { MessageLimits } from '../../kit/index.js';
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

/** Escapes and links (`<…>`) are never cut inside; Slack counts every character. */
const textPieces = angleMarkup({ tags: false });

/** mrkdwn segments for the packer: measured in characters, code cut with its fence reopened. */
const mrkdwn = fencedMarkup(textPieces);

/**
 * mrkdwn cut to at most `max` characters, ending in "…", at the shared cutter's place (a blank
 * line, a line, a space; never inside an escape or a link); text within `max` is returned as it is.
 */
export function clipMrkdwn(text: string, max: number): string {
  return clipCut(text, max, textPieces);
}

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
