/**
 * Model Markdown → Discord's Markdown: Discord's dialect for the shared walker
 * (`delivery/markup.ts`) and its cut into messages of at most 2 000 characters. Discord renders
 * bold, italics, strike-through, code, quotes and masked links itself; it has no tables, so a
 * table becomes a monospace grid in a code block. Every text node is escaped.
 */
import {
  angleMarkup,
  type Dialect,
  fencedMarkup,
  gridText,
  listMarker,
  packBlocks,
  renderBlocks,
} from '../../kit/index.js';
import { fenceCode as fence } from '../../kit/index.js';
import type { Token } from 'marked';

/** Discord's limit for a message's content. */
export const CONTENT_LIMIT = 2000;
/** What one message part may fill (a little under the limit: a title or a card's line may join it). */
export const PART_CHARS = 1990;

/** Text shown as itself: Markdown's marks and Discord's `<…>` (mentions, emoji) escaped. */
export function escapeDiscord(text: string): string {
  return text.replace(/([\\*_~`|<>#[\]()])/g, '\\$1').replace(/^(\s*)([-+]|\d+\.)(\s)/gm, '$1\\$2$3');
}

/** Inline code: a backtick in it asks for double ticks. */
export function codeSpan(code: string): string {
  const text = code.replace(/\n/g, ' ');
  return text.includes('`') ? `\`\` ${text.replace(/``/g, '`\u200b`')} \`\`` : `\`${text}\``;
}

const SAFE_HREF = /^(https?:|mailto:)/i;
const LANGUAGE = /^[A-Za-z0-9_+#.-]{1,32}$/;
/** Widest a grid column is padded to (a wider one makes every row wrap on a phone). */
const TABLE_COLUMN_MAX = 40;

const cells = (rows: string[][]) => rows.map((r) => r.map((c) => c.trim()));

const discord: Dialect = {
  escape: escapeDiscord,
  strong: (inner) => `**${inner}**`,
  em: (inner) => `*${inner}*`,
  del: (inner) => `~~${inner}~~`,
  heading: (inner) => `**${inner}**`,
  codespan: codeSpan,
  // `<href>` keeps Discord from unfurling every link of an answer into an embed.
  link: (href, label) =>
    SAFE_HREF.test(href) ? (label ? `[${label}](<${href}>)` : `<${href}>`) : label || escapeDiscord(href),
  untitledImage: 'image',
  code: (text, language) => fence(text, LANGUAGE.test(language) ? language : ''),
  table: (rows, align) => fence(gridText(cells(rows), align, TABLE_COLUMN_MAX)),
  quote: (blocks, nested) => {
    const inner = blocks.join('\n');
    if (!inner || nested) return inner;
    return inner
      .split('\n')
      .map((l) => `> ${l}`)
      .join('\n');
  },
  quoteKeepsDepth: false,
  htmlBlock: (text) => escapeDiscord(text.trimEnd()),
  hr: '———',
  list: {
    indent: '  ',
    // The number's dot escaped, so Discord shows the item's number as written rather than a list of its own.
    marker: listMarker({ boxes: ['☑', '☐'], dot: '\\.' }),
    continuation: (depth) => '  '.repeat(depth + 1),
    nestedOnOwnLine: true,
  },
};

const textPieces = angleMarkup({ tags: false });

/** Code cut into fenced pieces leaves room for the longest fence (a language of up to 32 characters). */
const markup = fencedMarkup(textPieces, 40);

/** Parsed Markdown as Discord messages of at most {@link PART_CHARS}; `head` opens the first. */
export function discordMessages(tokens: Token[], head?: string): string[] {
  const blocks = renderBlocks(discord, tokens);
  if (head) blocks.unshift({ kind: 'text', text: head });
  return packBlocks(blocks, PART_CHARS, markup)
    .map((b) => b.text)
    .filter((t) => t.trim() !== '');
}
