/**
 * Model Markdown → page HTML without a browser: the XSS corpus leaves no script, handler, image
 * or SVG; javascript: and other schemes are no links; links get rel="noopener noreferrer"; code
 * stays code (the browser test checks the same on the page).
 */
import { describe, expect, it } from 'vitest';
import { markdownHtml } from '../../src/channels/web/html.js';
import { parseMarkdown } from '../../src/delivery/render.js';

const html = (md: string) => markdownHtml(parseMarkdown(md));

describe('web chat Markdown', () => {
  it('drops scripts, event handlers, images, SVG and styles with what they hold', () => {
    const out = html(
      '<script>alert(1)</script>a <img src=x onerror=alert(2)> <svg onload=alert(3)><script>alert(4)</script></svg> <style>p{}</style> <iframe src="https://x.org"></iframe>b',
    );
    expect(out).toBe('a    b');
    expect(html('<p onclick="alert(1)" style="color:red">hi</p>')).toBe('<p>hi</p>');
  });

  it('makes links only of http(s) and mailto, with rel="noopener noreferrer"', () => {
    expect(
      html(
        '[a](javascript:alert(1)) [b](https://x.org) <a href=" JaVaScRiPt:alert(1)">c</a> [d](data:text/html,x) [e](mailto:a@b.c)',
      ),
    ).toBe(
      '<p><a>a</a> <a href="https://x.org" rel="noopener noreferrer" target="_blank">b</a> <a>c</a> <a>d</a> <a href="mailto:a@b.c" rel="noopener noreferrer" target="_blank">e</a></p>\n',
    );
  });

  it('keeps code as code, HTML in it as text', () => {
    // Highlighted (HTML is one of highlight.js's languages), and every bracket of the code escaped.
    expect(html('```html\n<script>x()</script>\n```')).toBe(
      '<pre><code class="language-html"><span class="hljs-tag">&lt;<span class="hljs-name">script</span>&gt;</span>x()<span class="hljs-tag">&lt;/<span class="hljs-name">script</span>&gt;</span>\n</code></pre>\n',
    );
    expect(html('```\n<script>x()</script>\n```')).toBe('<pre><code>&lt;script&gt;x()&lt;/script&gt;\n</code></pre>\n');
    expect(html('`<b>`')).toBe('<p><code>&lt;b&gt;</code></p>\n');
  });

  it('keeps the Markdown the other channels show: emphasis, lists, tables, quotes, a title line', () => {
    expect(html('**b** _i_ ~~s~~\n\n- one\n- two\n\n> q\n\n|a|b|\n|-|-|\n|1|2|')).toContain(
      '<strong>b</strong> <em>i</em> <del>s</del>',
    );
    expect(html('|a|b|\n|-|-|\n|1|2|')).toContain('<td>1</td>');
    expect(markdownHtml(parseMarkdown('body'), 'Job <x>')).toBe('<p><strong>Job &lt;x&gt;</strong></p><p>body</p>\n');
  });
});
