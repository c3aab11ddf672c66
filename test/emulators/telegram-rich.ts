/**
 * The emulator's check of a `rich_message` (sendRichMessage, sendRichMessageDraft, editMessageText)
 * by the limits the Bot API documents (`@grammyjs/types` rich.d.ts): exactly one of html,
 * markdown or blocks; at most 32 768 characters; at most 500 blocks (nested blocks, list items,
 * table rows and quotations count); at most 20 table columns. Markdown is read with marked (GFM),
 * as Telegram's clients render it; the visible text is the rendered HTML without its tags.
 */
import { marked, type Token, type Tokens } from 'marked';

/** Documented limits of one rich message. */
export const RICH_CHARS = 32_768;
export const RICH_BLOCKS = 500;
export const RICH_TABLE_COLUMNS = 20;

function blocks(tokens: Token[] | undefined): number {
  let n = 0;
  for (const t of tokens ?? []) {
    if (t.type === 'space' || t.type === 'text') continue;
    n += 1;
    if (t.type === 'list') for (const item of (t as Tokens.List).items) n += 1 + blocks(item.tokens);
    else if (t.type === 'table') n += 1 + (t as Tokens.Table).rows.length;
    else if (t.type === 'blockquote') n += blocks((t as Tokens.Blockquote).tokens);
  }
  return n;
}

function tables(tokens: Token[] | undefined): Tokens.Table[] {
  const out: Tokens.Table[] = [];
  for (const t of tokens ?? []) {
    if (t.type === 'table') out.push(t as Tokens.Table);
    const inner =
      (t as { tokens?: Token[]; items?: Tokens.ListItem[] }).items?.flatMap((i) => i.tokens) ??
      (t as { tokens?: Token[] }).tokens;
    if (t.type !== 'table') out.push(...tables(inner));
  }
  return out;
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', '#39': "'" };

/** A rich message checked: its Markdown and visible text, or the Bot API's refusal. */
export function checkRichMessage(raw: unknown): { markdown: string; plain: string } | { description: string } {
  let rich = raw;
  if (typeof rich === 'string') {
    try {
      rich = JSON.parse(rich);
    } catch {
      return { description: 'Bad Request: rich_message must be an object' };
    }
  }
  if (!rich || typeof rich !== 'object') return { description: 'Bad Request: rich_message must be an object' };
  const r = rich as Record<string, unknown>;
  const given = ['html', 'markdown', 'blocks'].filter((k) => r[k] !== undefined);
  if (given.length !== 1)
    return { description: 'Bad Request: exactly one of html, markdown or blocks must be specified' };
  if (given[0] !== 'markdown') return { description: 'Bad Request: the emulator only knows rich_message.markdown' };
  const markdown = String(r.markdown);
  if (!markdown.trim()) return { description: 'Bad Request: rich message is empty' };
  if ([...markdown].length > RICH_CHARS) return { description: 'Bad Request: rich message is too long' };
  const tokens = marked.lexer(markdown, { gfm: true });
  if (blocks(tokens) > RICH_BLOCKS) return { description: 'Bad Request: too many blocks in the rich message' };
  if (tables(tokens).some((t) => t.header.length > RICH_TABLE_COLUMNS))
    return { description: 'Bad Request: too many columns in a table' };
  const html = marked.parse(markdown, { gfm: true, async: false }) as string;
  const plain = html
    // Blocks apart by a blank line, as the HTML emulation shows them.
    .replace(/<\/(p|h[1-6]|pre|table|ul|ol|blockquote)>\n?/g, '\n\n')
    .replace(/<[^>]*>/g, '')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/&(lt|gt|amp|quot|#39);/g, (_, e: string) => ENTITIES[e] ?? '')
    .trim();
  return { markdown, plain };
}
