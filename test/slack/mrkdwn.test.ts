import { describe, expect, it } from 'vitest';
import { markdownToMrkdwn, markdownToSegments } from '../../src/channels/slack/mrkdwn.js';
import { SLACK_LIMITS, splitForSlack } from '../../src/channels/slack/split.js';

/** Every ``` in a block must pair up, or Slack shows the rest of the message as code. */
function fencesBalanced(text: string): boolean {
  return (text.match(/```/g) ?? []).length % 2 === 0;
}

describe('markdownToMrkdwn', () => {
  it('renders bold, italics, strike, inline code and links in Slack syntax', () => {
    const out = markdownToMrkdwn('**bold** and *it* and ~~gone~~, `x` and [docs](https://e.com/a?b=1&c=2)');
    expect(out).toBe('*bold* and _it_ and ~gone~, `x` and <https://e.com/a?b=1&amp;c=2|docs>');
  });

  it('keeps every character of an inline code span that holds a backtick (mrkdwn cannot escape one)', () => {
    const out = markdownToMrkdwn('run ``a`b`` now, and ``` `` ` ```');
    const visible = out.replace(/\u200b/g, '');
    expect(visible).toContain('```a`b```');
    expect(visible).toContain('`` `');
    expect(fencesBalanced(out)).toBe(true);
    // no run of backticks longer than a fence: the span cannot merge with its fence
    expect(out).not.toMatch(/````/);
  });

  it('escapes &, < and > in text and in code', () => {
    expect(markdownToMrkdwn('a < b && c > d')).toBe('a &lt; b &amp;&amp; c &gt; d');
    expect(markdownToMrkdwn('```\nif (a < b) x();\n```')).toBe('```\nif (a &lt; b) x();\n```');
    expect(markdownToMrkdwn('<script>alert(1)</script>')).not.toContain('<script>');
  });

  it('neutralises text that would close a code fence early', () => {
    const out = markdownToMrkdwn('````\nbefore\n```\nafter\n````');
    expect(out.startsWith('```\n')).toBe(true);
    expect(out.endsWith('\n```')).toBe(true);
    // exactly one opening and one closing fence remain
    expect(out.match(/```/g)).toHaveLength(2);
    expect(out).toContain('after');
  });

  it('renders lists with bullets, numbers and nesting, headings as bold', () => {
    const out = markdownToMrkdwn('# Title\n\n- one\n  - nested\n- two\n\n3. c\n4. d');
    expect(out).toContain('*Title*');
    expect(out).toContain('• one\n    ◦ nested\n• two');
    expect(out).toContain('3. c\n4. d');
  });

  it('renders a table as an aligned code block', () => {
    const out = markdownToMrkdwn('| name | n |\n|---|--:|\n| alpha | 1 |\n| b | 22 |');
    expect(out).toBe('```\nname  |  n\n------+---\nalpha |  1\nb     | 22\n```');
  });

  it('keeps autolinks and blockquotes', () => {
    expect(markdownToMrkdwn('see https://x.org')).toBe('see <https://x.org>');
    expect(markdownToMrkdwn('> quoted\n> more')).toBe('> quoted\n> more');
  });
});

describe('splitForSlack', () => {
  it('keeps a short reply in one section', () => {
    const parts = splitForSlack(markdownToSegments('hello **world**'));
    expect(parts).toHaveLength(1);
    expect(parts[0]!.blocks).toEqual([{ type: 'section', text: { type: 'mrkdwn', text: 'hello *world*' } }]);
  });

  it('splits a long reply with code and a table into valid sections under the limits', () => {
    const para = (i: number) => `Paragraph ${i} ` + 'lorem ipsum dolor sit amet '.repeat(20);
    const code =
      '```ts\n' + Array.from({ length: 200 }, (_, i) => `const v${i} = "${'x'.repeat(20)}";`).join('\n') + '\n```';
    const tableRows = Array.from({ length: 60 }, (_, i) => `| row${i} | ${i * 7} |`).join('\n');
    const md = [para(1), code, para(2), '| k | v |\n|---|---|\n' + tableRows, para(3)].join('\n\n');
    const parts = splitForSlack(markdownToSegments(md));
    const sections = parts.flatMap((p) => p.blocks.map((b) => b.text.text));
    expect(sections.length).toBeGreaterThan(3);
    for (const s of sections) {
      expect(s.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionChars);
      expect(fencesBalanced(s)).toBe(true);
    }
    const all = sections.join('\n');
    for (let i = 0; i < 200; i++) expect(all).toContain(`const v${i} =`);
    for (let i = 0; i < 60; i++) expect(all).toContain(`row${i} `);
    expect(all).toContain('Paragraph 3');
  });

  it('starts a new message after 50 blocks or 40 000 characters', () => {
    const md = Array.from({ length: 130 }, (_, i) => `${i}: ` + 'word '.repeat(590)).join('\n\n');
    const parts = splitForSlack(markdownToSegments(md));
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) {
      expect(p.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocksPerMessage);
      expect(p.blocks.reduce((n, b) => n + b.text.text.length, 0)).toBeLessThanOrEqual(SLACK_LIMITS.messageChars);
      expect(p.text.length).toBeLessThanOrEqual(3000);
    }
    const joined = parts.flatMap((p) => p.blocks.map((b) => b.text.text)).join('\n\n');
    expect(joined).toContain('129: word');
  });

  it('cuts a single huge line without breaking an escaped entity', () => {
    const md = 'a&b '.repeat(2000);
    const sections = splitForSlack(markdownToSegments(md)).flatMap((p) => p.blocks.map((b) => b.text.text));
    for (const s of sections) {
      expect(s.length).toBeLessThanOrEqual(3000);
      expect(s).not.toMatch(/&(a|am|amp)?$/);
    }
  });
});
