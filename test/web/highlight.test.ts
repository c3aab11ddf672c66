/**
 * Code blocks in the web chat: highlighted on the server with highlight.js (`src/channels/web/highlight.ts`), every
 * piece of the code escaped, the language's class kept only in its safe form, and the result
 * passed through the sanitiser like the rest of the answer.
 */
import { describe, expect, it } from 'vitest';
import { highlight, knownLanguage, MAX_HIGHLIGHT_CHARS } from '../../src/channels/web/highlight.js';
import { markdownHtml } from '../../src/channels/web/html.js';
import { parseMarkdown } from '../../src/delivery/render.js';

const html = (md: string) => markdownHtml(parseMarkdown(md));

describe('server-side highlighting', () => {
  it('marks keywords, strings, numbers, comments and literals of TypeScript', () => {
    expect(highlight("const x = 'a'; // note\nif (x) return 42 ?? null;", 'ts')).toBe(
      '<span class="hljs-keyword">const</span> x = <span class="hljs-string">&#x27;a&#x27;</span>; <span class="hljs-comment">// note</span>\n' +
        '<span class="hljs-keyword">if</span> (x) <span class="hljs-keyword">return</span> <span class="hljs-number">42</span> ?? <span class="hljs-literal">null</span>;',
    );
  });

  it('finds keywords only as whole words', () => {
    expect(highlight('constant iffy format', 'js')).toBe('constant iffy format');
    expect(highlight('x1if = for_each', 'python')).toBe('x1if = for_each');
  });

  it('knows Python, shell, SQL, JSON, TOML and diffs by their fence words', () => {
    expect(highlight('def f():  # c\n    return None', 'py')).toBe(
      '<span class="hljs-keyword">def</span> <span class="hljs-title function_">f</span>():  <span class="hljs-comment"># c</span>\n    <span class="hljs-keyword">return</span> <span class="hljs-literal">None</span>',
    );
    expect(highlight('echo "$HOME" # x', 'bash')).toContain('<span class="hljs-comment"># x</span>');
    expect(highlight('echo "$HOME" # x', 'sh')).toContain('<span class="hljs-variable">$HOME</span>');
    expect(highlight('SELECT id FROM t', 'sql')).toBe(
      '<span class="hljs-keyword">SELECT</span> id <span class="hljs-keyword">FROM</span> t',
    );
    const json = highlight('{"a": 1, "b": true}', 'json');
    expect(json).toContain('<span class="hljs-attr">&quot;a&quot;</span>');
    expect(json).toContain('<span class="hljs-number">1</span>');
    expect(highlight('[a]\nb = 1', 'toml')).toBe(
      '<span class="hljs-section">[a]</span>\n<span class="hljs-attr">b</span> = <span class="hljs-number">1</span>',
    );
    expect(highlight(' same\n-old\n+new', 'diff')).toBe(
      ' same\n<span class="hljs-deletion">-old</span>\n<span class="hljs-addition">+new</span>',
    );
    expect(knownLanguage('TypeScript')).toBe(true);
    expect(knownLanguage('brainfuck')).toBe(false);
    expect(knownLanguage('')).toBe(false);
  });

  it('escapes everything: markup in code (in strings, comments, plain) stays text', () => {
    const out = highlight('let s = "</span><script>x</script>"; /* <b> */ a < b && c > d', 'js');
    expect(out).not.toMatch(/<(?!\/?span)/);
    expect(out).toContain('&lt;/span&gt;&lt;script&gt;x&lt;/script&gt;');
    expect(out).toContain('a &lt; b &amp;&amp; c &gt; d');
    expect(highlight('<img src=x onerror=alert(1)>', 'nope')).toBe('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('a block over the limit is shown plain (escaped), not coloured', () => {
    const long = `const a = "<b>";\n`.repeat(Math.ceil(MAX_HIGHLIGHT_CHARS / 17) + 1);
    expect(long.length).toBeGreaterThan(MAX_HIGHLIGHT_CHARS);
    const out = highlight(long, 'ts');
    expect(out).not.toContain('<span');
    expect(out.startsWith('const a = &quot;&lt;b&gt;&quot;;\n')).toBe(true);
  });

  it('an unclosed string or comment runs to its end without swallowing the rest unescaped', () => {
    expect(highlight('x = "open\ny = <b>', 'js')).toBe(
      'x = <span class="hljs-string">&quot;open\ny = &lt;b&gt;</span>',
    );
    expect(highlight('/* never closed <i>', 'c')).toBe('<span class="hljs-comment">/* never closed &lt;i&gt;</span>');
  });
});

describe('code blocks in answers', () => {
  it('a fenced block keeps its language as a class and comes highlighted', () => {
    expect(html('```ts\nconst a = 1;\n```')).toBe(
      '<pre><code class="language-ts"><span class="hljs-keyword">const</span> a = <span class="hljs-number">1</span>;\n</code></pre>\n',
    );
  });

  it('a language word is reduced to a safe class name; an unknown one is escaped text', () => {
    expect(html('```c++ extra words\nint x;\n```')).toContain(
      '<code class="language-cpp"><span class="hljs-type">int</span> x;',
    );
    expect(html('```"><script>alert(1)</script>\nhi\n```')).toBe(
      '<pre><code class="language-scriptalert1script">hi\n</code></pre>\n',
    );
    expect(html('```\n</code></pre><script>alert(1)</script>\n```')).toBe(
      '<pre><code>&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;\n</code></pre>\n',
    );
  });

  it('spans outside the highlighter keep no attributes but highlight.js classes; other classes go', () => {
    expect(html('<span class="hljs-keyword evil" style="color:red" onclick="x()">a</span>')).toBe(
      '<p><span class="hljs-keyword">a</span></p>\n',
    );
    expect(html('<span class="hljs-title function_">f</span>')).toBe(
      '<p><span class="hljs-title function_">f</span></p>\n',
    );
    expect(html('<span class="big">b</span>')).toBe('<p><span>b</span></p>\n');
  });
});
