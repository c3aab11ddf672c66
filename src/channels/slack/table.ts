/**
 * Markdown tables as Slack table blocks: at most 100 rows (the header one of them) of at most 20
 * cells, and one table a message (Block Kit's limits). A bigger table stays a monospace grid in a
 * code block (`mrkdwn.ts`), which the splitter can cut.
 */
import type { Token, Tokens } from 'marked';
import { plainText } from '../../kit/index.js';

/** Block Kit's table limits. */
export const TABLE_LIMITS = { rows: 100, cells: 20 } as const;

/** A cell as Slack takes it: plain text of at least one character. */
type RawTextCell = { type: 'raw_text'; text: string };

/** Slack's table block (a type alias, so it is assignable to a loose block record). */
export type TableBlock = {
  type: 'table';
  rows: RawTextCell[][];
  column_settings?: Array<{ align: 'left' | 'center' | 'right' }>;
};

/** A top-level table token as a table block, or null when it is over Slack's limits. */
export function tableBlock(token: Token): TableBlock | null {
  if (token.type !== 'table') return null;
  const t = token as Tokens.Table;
  const rows = [t.header, ...t.rows];
  if (rows.length > TABLE_LIMITS.rows || rows.some((r) => r.length > TABLE_LIMITS.cells)) return null;
  // An empty cell is refused (raw_text needs a character): a space shows as empty.
  const cell = (c: Tokens.TableCell): RawTextCell => ({
    type: 'raw_text',
    text: plainText(c.tokens).replace(/\n/g, ' ') || ' ',
  });
  const block: TableBlock = { type: 'table', rows: rows.map((r) => r.map(cell)) };
  if (t.align.some((a) => a !== null)) block.column_settings = t.align.map((a) => ({ align: a ?? 'left' }));
  return block;
}

/** Characters a table block holds (its cells), for the message's limit. */
export function tableChars(block: TableBlock): number {
  return block.rows.reduce((n, r) => n + r.reduce((m, c) => m + c.text.length, 0), 0);
}
