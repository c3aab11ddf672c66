/** The shared block packer: limits honoured, code fences closed and reopened, nothing lost. */
import { describe, expect, it } from 'vitest';
import { slackLimits } from '../../src/channels/slack/split.js';
import { telegramLimits } from '../../src/channels/telegram/split.js';
import { angleMarkup, cutMarkup, type Piece } from '../../src/delivery/cut.js';
import {
  groupParts,
  type Markup,
  type MessageLimits,
  packBlocks,
  packMessages,
  pickCut,
} from '../../src/delivery/split.js';

const plain = angleMarkup({ tags: false });

/** A fenced block as the cutter's pieces: its fences open and close it, so a cut closes and reopens them. */
function fencedPieces(open: string, close: string): (body: string) => Piece[] {
  return (body) => [
    { kind: 'open', name: 'fence', raw: open, closer: close },
    ...plain(body),
    { kind: 'close', name: 'fence', raw: close },
  ];
}

/** Plain Markdown blocks, measured in characters; a code block's fence keeps its language line. */
const markdown: Markup<string> = {
  measure: (b) => b.length,
  join: (a, b) => `${a}\n\n${b}`,
  cut: (b, limit) => {
    const code = /^(```[a-z]*\n)([\s\S]*)(\n```)$/.exec(b);
    if (!code) return cutMarkup(b, limit, plain).map((piece) => piece.replace(/\s+$/, ''));
    const [, open, body, close] = code as unknown as [string, string, string, string];
    // The cutter does not count the fences, which every piece carries: leave room for them.
    return cutMarkup(body, limit - open.length - close.length, fencedPieces(open, close));
  },
};

const word = (i: number) => ['alpha', 'beta', 'gamma', 'delta', 'epsilon'][i % 5];
const paragraph = (n: number, words: number) =>
  `Paragraph ${n}: ${Array.from({ length: words }, (_, i) => word(i)).join(' ')}.`;
const code = (lang: string, lines: number) =>
  `\`\`\`${lang}\n${Array.from({ length: lines }, (_, i) => `const v${i} = compute(${i}, "${'x'.repeat(i % 30)}");`).join('\n')}\n\`\`\``;
const table = (rows: number) =>
  `| key | value |\n|-----|-------|\n${Array.from({ length: rows }, (_, i) => `| row${i} | ${i * 7} |`).join('\n')}`;

/** A long answer: prose, two code blocks and a table, about 10 000 characters. */
const answer = [paragraph(1, 120), code('ts', 100), paragraph(2, 200), table(120), code('', 40), paragraph(3, 60)].join(
  '\n\n',
);

/** The parts put back together: the fence closed at a cut and reopened in the next part removed. */
function rejoin(parts: string[]): string {
  return parts.join('\n').replace(/\n```\n```[a-z]*\n/g, '\n');
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

function fencesBalanced(part: string): boolean {
  return (part.match(/^```/gm) ?? []).length % 2 === 0;
}

describe('packMessages', () => {
  it('the long answer is about 10 000 characters with code and a table', () => {
    expect(answer.length).toBeGreaterThan(9_500);
    expect(answer.length).toBeLessThan(11_000);
  });

  const cases: [string, MessageLimits][] = [
    ['Telegram', telegramLimits],
    ['Slack', slackLimits],
    ['small parts, three to a message', { partUnits: 500, partsPerMessage: 3, messageUnits: 1_200 }],
  ];
  for (const [name, limits] of cases) {
    it(`splits within the limits (${name}), fences closed and reopened, nothing lost`, () => {
      const messages = packMessages(answer.split('\n\n'), limits, markdown);
      const parts = messages.flat();
      expect(parts.length).toBeGreaterThan(answer.length / limits.partUnits);
      for (const message of messages) {
        expect(message.length).toBeLessThanOrEqual(limits.partsPerMessage);
        expect(message.reduce((n, p) => n + p.length, 0)).toBeLessThanOrEqual(limits.messageUnits);
      }
      for (const part of parts) {
        expect(part.length).toBeLessThanOrEqual(limits.partUnits);
        expect(fencesBalanced(part)).toBe(true);
      }
      expect(squash(rejoin(parts))).toBe(squash(answer));
    });
  }

  it('joins short blocks into one part and keeps block order', () => {
    expect(packBlocks(['a', 'b', 'c'], 100, markdown)).toEqual(['a\n\nb\n\nc']);
    expect(packBlocks(['aaaa', 'bbbb', 'cc'], 10, markdown)).toEqual(['aaaa\n\nbbbb', 'cc']);
  });

  it('a cut block starts a new part, and its last piece takes the blocks after it', () => {
    const long = 'one two three four five six seven eight nine ten';
    const parts = packBlocks(['intro', long, 'end'], 20, markdown);
    expect(parts[0]).toBe('intro');
    expect(parts.at(-1)?.endsWith('\n\nend')).toBe(true);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(20);
    expect(squash(parts.join(' '))).toBe(squash(`intro ${long} end`));
  });
});

describe('cutting', () => {
  it('ignores a boundary that would leave a uselessly short piece', () => {
    expect(pickCut([-1, 3, 9], 5)).toBe(9);
    expect(pickCut([2, 3], 5)).toBe(-1);
  });

  it('groupParts starts a new message at the part count or the unit budget', () => {
    const limits = { partUnits: 10, partsPerMessage: 2, messageUnits: 12 };
    expect(groupParts(['aaaa', 'bbbb', 'cccc'], limits, (p) => p.length)).toEqual([['aaaa', 'bbbb'], ['cccc']]);
    expect(groupParts(['aaaaaaaa', 'bbbbbbbb'], limits, (p) => p.length)).toEqual([['aaaaaaaa'], ['bbbbbbbb']]);
  });
});
