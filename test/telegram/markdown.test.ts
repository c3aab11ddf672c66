import { describe, expect, it } from 'vitest';
import { escapeHtml, markdownToHtml, markdownToHtmlBlocks } from '../../src/channels/telegram/markdown.js';
import { htmlToPlain, packBlocks, splitHtml, visibleLength } from '../../src/channels/telegram/split.js';
import { checkTelegramHtml } from '../emulators/telegram-html.js';

function valid(html: string): string {
  const r = checkTelegramHtml(html);
  if (!r.ok) throw new Error(`${r.description}\n---\n${html}`);
  return r.text;
}

describe('markdown → Telegram HTML', () => {
  it('escapes <, > and & in text, code and links', () => {
    const html = markdownToHtml('a < b && c > d `x<y&z` [l](http://h/?a=1&b=<2>)');
    expect(html).toContain('a &lt; b &amp;&amp; c &gt; d');
    expect(html).toContain('<code>x&lt;y&amp;z</code>');
    expect(html).toContain('href="http://h/?a=1&amp;b=');
    valid(html);
  });

  it('renders code blocks with their language, headings bold, lists as bullets', () => {
    const html = markdownToHtml('# Title\n\n- one\n- two\n  1. nested\n\n```ts\nconst a = 1 < 2;\n```');
    expect(html).toContain('<b>Title</b>');
    expect(html).toContain('• one');
    expect(html).toContain('1. nested');
    expect(html).toContain('<pre><code class="language-ts">const a = 1 &lt; 2;</code></pre>');
    valid(html);
  });

  it('renders tables as an aligned monospace block', () => {
    const html = markdownToHtml('| name | n |\n|---|---|\n| alpha | **1** |\n| b | 22 |');
    expect(html.startsWith('<pre>')).toBe(true);
    const text = valid(html);
    expect(text.split('\n')).toEqual(['name  | n', '------+---', 'alpha | 1', 'b     | 22']);
  });

  it('shows raw HTML and unknown link schemes as text, never as tags', () => {
    const html = markdownToHtml('<script>alert(1)</script>\n\nx <b>y</b> [js](javascript:alert(1))');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('javascript:');
    expect(valid(html)).toContain('<script>');
  });

  it('keeps an unterminated code fence (mid-stream) balanced', () => {
    const html = markdownToHtml('text\n\n```py\nprint(1)');
    expect(html).toContain('<pre><code class="language-py">print(1)</code></pre>');
    valid(html);
  });

  it('flattens nested blockquotes, which Telegram rejects', () => {
    const html = markdownToHtml('> outer\n>\n> > inner');
    expect(html.match(/<blockquote>/g)).toHaveLength(1);
    expect(valid(html)).toContain('inner');
  });

  it('escapeHtml escapes quotes too', () => {
    expect(escapeHtml('"<&>"')).toBe('&quot;&lt;&amp;&gt;&quot;');
  });
});

describe('splitting', () => {
  it('leaves short text in one chunk', () => {
    expect(splitHtml('<b>hi</b>')).toEqual(['<b>hi</b>']);
  });

  it('splits a long code block into closed and reopened <pre><code> chunks', () => {
    const code = Array.from({ length: 400 }, (_, i) => `line ${i} <tag> & more`).join('\n');
    const chunks = packBlocks(markdownToHtmlBlocks(`intro\n\n\`\`\`js\n${code}\n\`\`\``), 1000);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) {
      expect(visibleLength(c)).toBeLessThanOrEqual(1000);
      valid(c);
    }
    for (const c of chunks.slice(1)) expect(c.startsWith('<pre><code class="language-js">')).toBe(true);
    const joined = chunks.map(htmlToPlain).join('\n');
    for (let i = 0; i < 400; i++) expect(joined).toContain(`line ${i} <tag> & more`);
  });

  it('prefers paragraph boundaries over cutting a line', () => {
    const para = (n: number) => `${'word '.repeat(60).trim()} p${n}.`;
    const chunks = packBlocks(markdownToHtmlBlocks(Array.from({ length: 10 }, (_, i) => para(i)).join('\n\n')), 700);
    for (const c of chunks) expect(c.trim().endsWith('.')).toBe(true);
  });

  it('never loses text when a single paragraph is over the limit', () => {
    const long = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' ');
    const chunks = splitHtml(`<b>${escapeHtml(long)}</b>`, 500);
    for (const c of chunks) valid(c);
    const words = chunks.map(htmlToPlain).join(' ').split(/\s+/);
    expect(words).toEqual(long.split(' '));
  });
});

describe('rendering and splitting random Markdown', () => {
  // A small deterministic generator (mulberry32) so a failure is reproducible.
  function rng(seed: number) {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const fragments = [
    'plain words here',
    '**bold** and _it_',
    '`a<b>&c`',
    '[link](https://example.com/?a=1&b=2)',
    '<span>raw & html</span>',
    '# heading <x>',
    '- item one\n- item **two**\n  - nested',
    '1. first\n2. second',
    '> quoted & <b>\n> > nested',
    '```js\nif (a < b && c > d) { return "<tag>"; }\n```',
    '| a | b |\n|---|---|\n| <1> | &2 |',
    '~~gone~~ ![img](https://e.com/i.png)',
    '---',
    'tail \\* escaped',
  ];

  it('always yields valid HTML chunks within the limit that keep every code line', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const next = rng(seed);
      const parts: string[] = [];
      const n = 5 + Math.floor(next() * 80);
      for (let i = 0; i < n; i++) parts.push(fragments[Math.floor(next() * fragments.length)] as string);
      const md = parts.join('\n\n');
      const limit = 200 + Math.floor(next() * 800);
      const chunks = packBlocks(markdownToHtmlBlocks(md), limit);
      const visible = chunks.map((c) => {
        expect(visibleLength(c)).toBeLessThanOrEqual(limit);
        return valid(c);
      });
      const all = visible.join('\n');
      const codeLines = parts.filter((p) => p.startsWith('```')).length;
      expect(all.split('if (a < b && c > d) { return "<tag>"; }').length - 1).toBe(codeLines);
    }
  });
});
