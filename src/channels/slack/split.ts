/**
 * Slack's side of splitting: its limits, how mrkdwn is measured and cut, and the section blocks
 * the parts become. The packing policy is the shared one in `delivery/split.ts`.
 */
import { cutIndex, groupParts, type Markup, type MessageLimits, packBlocks, splitFenced, splitText as splitPlain } from '../../delivery/split.js';
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

/** {@link SLACK_LIMITS} as the packer reads them: a part is one section block. */
export const slackLimits: MessageLimits = {
  partUnits: SLACK_LIMITS.sectionChars,
  partsPerMessage: SLACK_LIMITS.blocksPerMessage,
  messageUnits: SLACK_LIMITS.messageChars,
};

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

const FENCE = { open: '```\n', close: '\n```' };

/** With no line or space to cut at: a cut that splits no `&…;` entity and no `<…>` link. */
function hardCut(window: string, max: number): number {
  let cut = max;
  const amp = window.lastIndexOf('&');
  if (amp >= 0 && amp > max - 6 && !window.slice(amp).includes(';')) cut = amp;
  const lt = window.lastIndexOf('<', cut - 1);
  if (lt > 0 && lt > window.lastIndexOf('>', cut - 1)) cut = lt;
  return cut;
}

/** Split plain mrkdwn into pieces of at most `max` characters. */
export function splitText(text: string, max: number): string[] {
  return splitPlain(text, max, hardCut);
}

/** Split a fenced code block into fenced blocks of at most `max` characters each. */
export function splitCode(fenced: string, max: number): string[] {
  const body = fenced.startsWith(FENCE.open) && fenced.endsWith(FENCE.close) ? fenced.slice(FENCE.open.length, -FENCE.close.length) : fenced;
  return splitFenced(body, max, FENCE, hardCut);
}

/** mrkdwn segments for the packer: measured in characters, code cut with its fence reopened. */
const mrkdwn: Markup<MrkdwnSegment> = {
  measure: (seg) => seg.text.length,
  join: (a, b) => (a.text ? { kind: 'text', text: `${a.text}\n\n${b.text}` } : b),
  cut: (seg, max) => (seg.kind === 'code' ? splitCode(seg.text, max) : splitText(seg.text, max)).map((text) => ({ kind: seg.kind, text })),
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
    const all = group.join('\n\n');
    const text = all.length > FALLBACK_CHARS ? `${all.slice(0, cutIndex(all, FALLBACK_CHARS - 1, hardCut))}…` : all;
    return { text, blocks: group.map((s): SectionBlock => ({ type: 'section', text: { type: 'mrkdwn', text: s } })) };
  });
}
