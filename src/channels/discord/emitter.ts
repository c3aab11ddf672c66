/**
 * Discord's emitter: answers as Discord Markdown split at 2 000 characters, cards (approval,
 * question, tool line, notice: views from `delivery/cards.ts`) as a message whose buttons are
 * message components. Pure, so the wording is tested without a bot.
 */
import {
  type Button,
  cardEmitter,
  type CardLimits,
  type CardView,
  type Emitter,
  fenceCode as fence,
  type Part,
  renderSpans,
  type Span,
  TITLE_ICON,
  trimText,
  type BlockMarks,
  renderViewBlock,
} from '../../kit/index.js';
import type { Token } from 'marked';
import { encodeCustomId } from './codec.js';
import { CONTENT_LIMIT, codeSpan, discordMessages, escapeDiscord } from './format.js';

/** A button row as Discord takes it (an action row of buttons). */
export interface ActionRow {
  type: 1;
  components: Array<{ type: 2; style: 1 | 2 | 4; label: string; custom_id: string }>;
}

/** A Discord message body: content and its button rows. */
export interface DiscordBody {
  content: string;
  components?: ActionRow[];
}

/** Display name of a principal (`discord:42` → a known name, else the id). */
export type NameOf = (principal: string | null | undefined) => string;

/** Buttons in a row and rows in a message, as Discord allows. */
const [ROW_BUTTONS, ROWS] = [5, 5];

/** What fits on a Discord card: far under 2 000 characters, labels within 80, at most 20 answers (of 25 buttons). */
export const DISCORD_CARD_LIMITS: CardLimits = {
  labelChars: 200,
  textChars: 1200,
  quoteChars: 300,
  previewChars: 1000,
  buttonChars: 80,
  maxAnswers: 20,
  tailChars: 600,
  tailLines: 1000,
};

/** Rows of neutral buttons as Discord action rows (a long row wraps at 5). */
export function componentsOf(rows: Button[][]): ActionRow[] {
  const out: ActionRow[] = [];
  for (const row of rows)
    for (let i = 0; i < row.length; i += ROW_BUTTONS)
      out.push({
        type: 1,
        components: row.slice(i, i + ROW_BUTTONS).map((b) => ({
          type: 2,
          style: b.style === 'danger' ? 4 : b.style === 'primary' ? 1 : 2,
          label: trimText(b.label, 80),
          custom_id: encodeCustomId(b.action),
        })),
      });
  return out.slice(0, ROWS);
}

function part(content: string, buttons?: Button[][]): Part {
  const components = buttons?.length ? componentsOf(buttons) : undefined;
  return { body: components ? { content, components } : { content }, text: content };
}

function spans(s: Span[], nameOf: NameOf): string {
  return renderSpans(s, {
    text: escapeDiscord,
    strong: (t) => `**${escapeDiscord(t)}**`,
    code: codeSpan,
    who: (p) => escapeDiscord(nameOf(p)),
  });
}

/** A view's blocks as Discord Markdown, naming people with `nameOf`. */
const blockMarks = (nameOf: NameOf): BlockMarks => ({
  spans: (s) => spans(s, nameOf),
  code: fence,
  quote: (text, label) => `> ${label ? `${escapeDiscord(label)}: ` : ''}${escapeDiscord(text).replace(/\n/g, '\n> ')}`,
  hint: (s) => `-# ${spans(s, nameOf)}`,
});

/** A card view as one message's content (never over Discord's limit). */
export function viewContent(view: CardView, nameOf: NameOf): string {
  const marks = blockMarks(nameOf);
  const text = view.blocks.map((b) => renderViewBlock(b, marks)).join('\n');
  return text.length <= CONTENT_LIMIT ? text : trimText(view.fallback, CONTENT_LIMIT);
}

/** Build the emitter; `nameOf` names who requested or decided a card. */
export function discordEmitter(nameOf: NameOf): Emitter {
  return {
    markdown(tokens: Token[], title?: string, buttons?: Button[][]): Part[] {
      const head = title ? `${TITLE_ICON} **${escapeDiscord(trimText(title, 200))}**` : undefined;
      const texts = discordMessages(tokens, head);
      return texts.map((t, i) => part(t, i === texts.length - 1 ? buttons : undefined));
    },
    ...cardEmitter(DISCORD_CARD_LIMITS, (view) => [part(viewContent(view, nameOf), view.buttons)]),
  };
}
