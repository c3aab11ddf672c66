/**
 * Slack's emitter: content → mrkdwn sections split within Slack's limits, or markdown blocks for
 * long or structured text while those are in force (`markdown-block.ts`), table blocks, and Block
 * Kit cards. Pure.
 */
import type { Token } from 'marked';
import { cardEmitter, TITLE_ICON } from '../../kit/index.js';
import type { Button, Emitter, Part } from '../../kit/index.js';
import {
  blockChars,
  type MarkdownBlock,
  MARKDOWN_BLOCK_CHARS,
  markdownBlocks,
  markdownChars,
  prefersMarkdown,
} from './markdown-block.js';
import { buttonBlocks, type CardMessage, SLACK_CARD_LIMITS, viewMessage } from './blocks.js';
import { escapeMrkdwn, fenceCode, markdownToMrkdwn, tokensToSegments } from './mrkdwn.js';
import { clipMrkdwn, SLACK_LIMITS, slackLimits, splitForSlack } from './split.js';
import { tableBlock } from './table.js';

const part = (message: CardMessage): Part => ({ body: message, text: message.text });

/**
 * Whether `b`'s blocks may join `a` in one message: Slack's block and character limits, one
 * table; with markdown blocks, 12 000 characters in all — their own limit together, and the whole
 * message's too, since Slack has been seen refusing a little more beside them (`msg_blocks_too_long`,
 * slackapi/bolt-js#2509).
 */
function fits(a: CardMessage, b: CardMessage): boolean {
  const tables = [...a.blocks, ...b.blocks].filter((x) => (x as { type: string }).type === 'table').length;
  const markdown = markdownChars(a.blocks) + markdownChars(b.blocks) > 0;
  return (
    tables <= 1 &&
    a.blocks.length + b.blocks.length <= SLACK_LIMITS.blocksPerMessage &&
    blockChars(a.blocks) + blockChars(b.blocks) <= (markdown ? MARKDOWN_BLOCK_CHARS : SLACK_LIMITS.messageChars)
  );
}

/** A markdown block as a message; its fallback text is its mrkdwn rendering (notifications, search). */
function markdownMessage(block: MarkdownBlock): CardMessage {
  return { text: clipMrkdwn(markdownToMrkdwn(block.text), SLACK_LIMITS.sectionChars), blocks: [block] };
}

/**
 * Model Markdown as messages: text runs split by the shared packer — or, with `markdown` and where
 * the run reads better so, as markdown blocks — each top-level table within Slack's limits a
 * table block (`table.ts`) — one a message — joined to its neighbours where they fit. A bigger
 * table stays a code grid in the text.
 */
function markdownMessages(tokens: Token[], title: string | undefined, markdown: boolean): CardMessage[] {
  const messages: CardMessage[] = [];
  const add = (m: CardMessage) => {
    const last = messages.at(-1);
    if (last && fits(last, m))
      messages[messages.length - 1] = {
        text: clipMrkdwn(`${last.text}\n\n${m.text}`, SLACK_LIMITS.sectionChars),
        blocks: [...last.blocks, ...m.blocks],
      };
    else messages.push(m);
  };
  let run: Token[] = [];
  const flush = (first: boolean) => {
    if (markdown && prefersMarkdown(run)) {
      for (const block of markdownBlocks(run, first ? title : undefined)) add(markdownMessage(block));
      run = [];
      return;
    }
    const segments = tokensToSegments(run);
    if (first && title)
      segments.unshift({ kind: 'text', text: `${TITLE_ICON} *${escapeMrkdwn(title).replace(/\*/g, '∗')}*` });
    run = [];
    splitForSlack(segments, slackLimits).forEach(add);
  };
  for (const token of tokens) {
    const table = tableBlock(token);
    if (!table) {
      run.push(token);
      continue;
    }
    flush(messages.length === 0);
    const grid = table.rows.map((r) => r.map((c) => c.text).join(' | ')).join('\n');
    add({ text: clipMrkdwn(fenceCode(grid), SLACK_LIMITS.sectionChars), blocks: [table] });
  }
  flush(messages.length === 0);
  return messages;
}

/**
 * Build the Slack emitter; `markdown` says whether long or structured answers go as markdown
 * blocks now (`slack.markdown_blocks` and the workspace's answer so far).
 */
export function createSlackEmitter(markdown: () => boolean): Emitter {
  return {
    markdown(tokens: Token[], title?: string, buttons?: Button[][]): Part[] {
      const messages = markdownMessages(tokens, title, markdown());
      const last = messages.at(-1);
      if (last && buttons?.length)
        messages[messages.length - 1] = { ...last, blocks: [...last.blocks, ...buttonBlocks(buttons)] };
      return messages.map(part);
    },
    ...cardEmitter(SLACK_CARD_LIMITS, (view) => [part(viewMessage(view))]),
  };
}

/** The Slack emitter with sections only (slash command answers, and where no surface decides). */
export const slackEmitter: Emitter = createSlackEmitter(() => false);
