/**
 * The approval card is the command. A card shows the exact arguments — line breaks as line
 * breaks, tabs, controls, ANSI escapes and bidirectional or invisible characters as marks — and
 * nothing folded; arguments too long for a platform's card are cut there with a mark and go whole
 * as a file before the card, or the card offers no Approve. Each renderer (Telegram, Slack, the
 * web chat) is checked with a command that hides a second line behind a comment, a bidi override,
 * a tab, an ANSI escape and 5 000 characters.
 */
import { describe, expect, it } from 'vitest';
import { SLACK_CARD_LIMITS } from '../../src/channels/slack/blocks.js';
import { slackEmitter } from '../../src/channels/slack/emitter.js';
import { TELEGRAM_CARD_LIMITS } from '../../src/channels/telegram/cards.js';
import { telegramEmitter } from '../../src/channels/telegram/emitter.js';
import { htmlToPlain } from '../../src/channels/telegram/split.js';
import { WEB_CARD_LIMITS, webEmitter } from '../../src/channels/web/surface.js';
import type { ApprovalContent } from '../../src/contract/content.js';
import type { Emitter, Part } from '../../src/contract/surface.js';
import { shownPreview } from '../../src/delivery/approval-preview.js';
import { approvalView } from '../../src/delivery/cards.js';
import { type CardLimits, type CardView, spansText } from '../../src/delivery/views.js';
import { cutVisible, visibleText } from '../../src/delivery/visible.js';
import { bashTool } from '../../src/tools/builtins/bash.js';
import { HIDDEN_SECOND_LINE, hostileCommand, RAW_HIDDEN } from './hostile-args.js';

function bashPreview(command: string): string {
  const parsed = bashTool.parse({ command });
  if (!parsed.ok) throw new Error(parsed.error);
  return bashTool.preview?.(parsed.value) ?? '';
}

const pending = (preview: string, extra: Partial<ApprovalContent> = {}): ApprovalContent => ({
  type: 'approval',
  id: '0123456789abcdef',
  label: `bash ${HIDDEN_SECOND_LINE}`,
  preview,
  requester: 'telegram:111',
  alwaysCovers: 'bash with exactly the command shown, workdir `.`, background false',
  state: 'pending',
  scope: null,
  by: null,
  note: null,
  ...extra,
});

describe('marks: what prints nothing or moves text is shown as a mark', () => {
  it('keeps line breaks and spaces, marks tabs, controls, escapes, bidi and invisible characters', () => {
    expect(visibleText('a  b\nc')).toBe('a  b\nc');
    expect(visibleText('a\tb\rc\x1b[31md\x00\x7f')).toBe('a⟨TAB⟩b⟨CR⟩c⟨ESC⟩[31md⟨NUL⟩⟨DEL⟩');
    expect(visibleText('\u202eabc\u202c')).toBe('⟨U+202E RLO⟩abc⟨U+202C PDF⟩');
    expect(visibleText('\u2066x\u2069\u200by\u200d\u2028\u2029\ufeff')).toBe(
      '⟨U+2066 LRI⟩x⟨U+2069 PDI⟩⟨U+200B ZWSP⟩y⟨U+200D ZWJ⟩⟨U+2028 LINE SEPARATOR⟩⟨U+2029 PARAGRAPH SEPARATOR⟩⟨U+FEFF BOM⟩',
    );
    // Spaces that are not U+0020, tag characters, variation selectors and private use.
    expect(visibleText('a\u00a0b\u3000c\u{e0041}\ufe0f\ue000')).toBe(
      'a⟨U+00A0 NBSP⟩b⟨U+3000⟩c⟨U+E0041⟩⟨U+FE0F⟩⟨U+E000⟩',
    );
    // Letters, accents and emoji stay as they are.
    expect(visibleText('héllo wörld 日本 ✓')).toBe('héllo wörld 日本 ✓');
  });

  it('marks a ⟨ of the text itself, so no text can pass for a mark', () => {
    const fake = 'rm -rf ~ ⟨… 200 more characters not shown on this card⟩';
    expect(visibleText(fake)).toBe('rm -rf ~ ⟨U+27E8⟩… 200 more characters not shown on this card⟩');
    expect(visibleText('⟨TAB⟩')).not.toBe(visibleText('\t'));
  });

  it('cuts only between marks and characters, preferring the end of a line', () => {
    const text = visibleText(`${'a'.repeat(10)}\u202e${'b'.repeat(10)}`);
    for (let room = 0; room <= text.length; room++) {
      const { head } = cutVisible(text, (h) => h.length <= room);
      expect(head.length).toBeLessThanOrEqual(room);
      expect(text.startsWith(head)).toBe(true);
      expect(head).not.toMatch(/⟨[^⟩]*$/);
    }
    expect(cutVisible(`${'a'.repeat(90)}\n${'b'.repeat(20)}`, (h) => h.length <= 100).head).toBe('a'.repeat(90));
  });
});

/** The code block of a drawn card, and every button label. */
interface Drawn {
  code: string;
  /** Everything the card shows, as text. */
  all: string;
  buttons: string[];
}

function viewOf(part: Part): CardView {
  return (part.body as { view: CardView }).view;
}

const RENDERERS: Array<{ name: string; emitter: Emitter; limits: CardLimits; draw: (parts: Part[]) => Drawn }> = [
  {
    name: 'Telegram (HTML <pre>)',
    emitter: telegramEmitter((p) => p ?? 'someone'),
    limits: TELEGRAM_CARD_LIMITS,
    draw(parts) {
      const body = parts[0]!.body as { html: string; keyboard?: { inline_keyboard: Array<Array<{ text: string }>> } };
      const pre = /<pre>([\s\S]*)<\/pre>/.exec(body.html)?.[1] ?? '';
      return {
        code: htmlToPlain(pre),
        all: htmlToPlain(body.html),
        buttons: (body.keyboard?.inline_keyboard ?? []).flat().map((b) => b.text),
      };
    },
  },
  {
    name: 'Slack (code block, mrkdwn escaped)',
    emitter: slackEmitter,
    limits: SLACK_CARD_LIMITS,
    draw(parts) {
      const blocks = (parts[0]!.body as { blocks: Array<Record<string, any>> }).blocks;
      const fenced = blocks.find((b) => b.type === 'section' && String(b.text.text).startsWith('```'))?.text.text ?? '';
      const unescapeMrkdwn = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
      return {
        code: unescapeMrkdwn(fenced.replace(/^```\n/, '').replace(/\n```$/, '')),
        all: blocks
          .map((b) => b.text?.text ?? (b.elements ?? []).map((e: any) => e.text?.text ?? e.text ?? '').join(' '))
          .join('\n'),
        buttons: blocks
          .filter((b) => b.type === 'actions')
          .flatMap((b) => b.elements)
          .map((e: { text: { text: string } }) => e.text.text),
      };
    },
  },
  {
    name: 'web chat (the page draws the view)',
    emitter: webEmitter,
    limits: WEB_CARD_LIMITS,
    draw(parts) {
      const view = viewOf(parts[0]!);
      return {
        code: view.blocks.find((b) => b.kind === 'code')?.text ?? '',
        all: [
          view.name,
          view.fallback,
          ...view.blocks.map((b) => (b.kind === 'code' || b.kind === 'quote' ? b.text : spansText(b.spans, (p) => p))),
        ].join('\n'),
        buttons: view.buttons.flat().map((b) => b.label),
      };
    },
  },
];

describe.each(RENDERERS)('the card on $name', ({ emitter, limits, draw }) => {
  it('shows the hidden second line as a line and every mark, with nothing raw or folded', () => {
    const preview = bashPreview(`${HIDDEN_SECOND_LINE}\t# \u202etxt.exe\u202c \x1b[8mhidden\x1b[0m`);
    const card = draw(emitter.approval(pending(preview)));
    expect(emitter.approvalFile?.(pending(preview))).toBeUndefined();
    expect(card.code).toBe(
      'workdir . · in the foreground, default timeout\n$ ls -la   # list files only; the rest is a comment:\n' +
        'touch pwned.txt⟨TAB⟩# ⟨U+202E RLO⟩txt.exe⟨U+202C PDF⟩ ⟨ESC⟩[8mhidden⟨ESC⟩[0m',
    );
    expect(card.all).not.toMatch(RAW_HIDDEN);
    expect(card.buttons.some((b) => b.includes('Approve'))).toBe(true);
  });

  it('a command of 5 000 characters: cut with a mark, whole in the file, Approve only when the file is there', () => {
    const preview = bashPreview(hostileCommand(5000));
    const whole = visibleText(preview);
    const content = pending(preview);
    const file = emitter.approvalFile?.(content);
    const shown = shownPreview(preview, limits);
    if (!shown.cut) {
      // The web chat's card holds 20 000 characters: it shows everything and needs no file.
      expect(file).toBeUndefined();
      expect(draw(emitter.approval(content)).code).toBe(whole);
      return;
    }
    expect(file?.name).toBe('approval-01234567-arguments.txt');
    expect(file?.text.endsWith(`\n${whole}\n`)).toBe(true);
    expect(file?.text).not.toMatch(RAW_HIDDEN);
    const sent = draw(emitter.approval({ ...content, wholeFile: { name: file!.name, sent: true } }));
    const [head, mark, ...after] = sent.code.split(/\n(?=⟨… )/);
    expect(after).toEqual([]);
    expect(whole.startsWith(head!)).toBe(true);
    const rest = whole.slice(head!.length);
    const lines = (rest.match(/\n/g) ?? []).length + 1;
    const chars = rest.length.toLocaleString('en').replace(/,/g, ' ');
    expect(mark).toBe(`⟨… ${chars} more characters on ${lines} lines not shown on this card⟩`);
    expect(sent.code).toContain('\ntouch pwned.txt⟨TAB⟩# ⟨U+202E RLO⟩');
    expect(sent.all).toContain('Too long for this card');
    expect(sent.all).toContain(file!.name);
    expect(sent.all).not.toMatch(RAW_HIDDEN);
    expect(sent.buttons.filter((b) => /Approve|This session|Always/.test(b))).toHaveLength(3);
    // Without the file nothing may be approved here: the tail would run unseen.
    for (const wholeFile of [undefined, { name: file!.name, sent: false, reason: 'Bad Request: refused' }]) {
      const refused = draw(emitter.approval({ ...content, ...(wholeFile ? { wholeFile } : {}) }));
      expect(refused.buttons).toEqual(['❌ Deny']);
      expect(refused.all).toContain('Approving is not offered');
    }
  });
});

describe('card sizes stay within each platform', () => {
  it('a Telegram card with the longest preview is under 4096 visible characters; a Slack code section under 3000', () => {
    const preview = bashPreview(hostileCommand(9_000).replace(/x/g, '<&'));
    const file = { name: 'approval-01234567-arguments.txt', sent: true };
    const tg = telegramEmitter(() => 'Alice').approval(pending(preview, { wholeFile: file }));
    expect(htmlToPlain((tg[0]!.body as { html: string }).html).length).toBeLessThanOrEqual(4096);
    const slack = (slackEmitter.approval(pending(preview, { wholeFile: file }))[0]!.body as { blocks: any[] }).blocks;
    for (const b of slack) if (b.type === 'section') expect(b.text.text.length).toBeLessThanOrEqual(3000);
    // The longest label and scope too (a file tool's path is its scope).
    const longest = pending(preview, {
      wholeFile: { ...file, sent: false, reason: 'r'.repeat(500) },
      label: `write_file ${'p/'.repeat(1000)}`,
      alwaysCovers: `write_file on ${'p/'.repeat(1000)}`,
    });
    const tgLongest = telegramEmitter(() => 'A'.repeat(64)).approval(longest);
    expect(htmlToPlain((tgLongest[0]!.body as { html: string }).html).length).toBeLessThanOrEqual(4096);
    const approvable = telegramEmitter(() => 'A'.repeat(64)).approval({ ...longest, wholeFile: file });
    expect(htmlToPlain((approvable[0]!.body as { html: string }).html).length).toBeLessThanOrEqual(4096);
    const web = approvalView(pending(`${hostileCommand(30_000)}\n`.repeat(2), { wholeFile: file }), WEB_CARD_LIMITS);
    expect(web.blocks.find((b) => b.kind === 'code')!.text.length).toBeLessThanOrEqual(20_000);
  });
});
