/**
 * Prices in a rich answer: Telegram's rich Markdown reads `$…$` as a formula, so the rich emitter
 * escapes a `$` before a digit outside code (the rule itself: test/delivery/markdown-dollars.test.ts).
 */
import { marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { telegramEmitter } from '../../src/channels/telegram/emitter.js';

describe('dollar signs in rich answers', () => {
  it('the rich emitter sends the escaped Markdown; the HTML one shows the text unchanged', () => {
    const tokens = marked.lexer('It costs $5 to $10.\n\n```\nprice=$5\n```\n');
    const rich = telegramEmitter(
      () => '',
      () => true,
    ).markdown(tokens);
    expect((rich[0]!.body as { markdown: string }).markdown).toBe('It costs \\$5 to \\$10.\n\n```\nprice=$5\n```');
    const html = telegramEmitter(
      () => '',
      () => false,
    ).markdown(tokens);
    expect((html[0]!.body as { html: string }).html).toContain('It costs $5 to $10.');
  });
});
