/** Text in HTML (`kit/html.ts`): escaped into it, and an entity read back as its character. */
import { describe, expect, it } from 'vitest';
import { decodeHtmlEntity, escapeHtml } from '../../src/kit/html.js';

describe('text in HTML', () => {
  it('escapes &, <, > and "', () => {
    expect(escapeHtml(`a < b && c > "d" 'e'`)).toBe(`a &lt; b &amp;&amp; c &gt; &quot;d&quot; 'e'`);
  });

  it('reads back what it escaped, and numeric entities, as their characters', () => {
    const text = `<b> & "q"`;
    const entities = escapeHtml(text).match(/&[a-z]+;/g) ?? [];
    expect(entities.map(decodeHtmlEntity)).toEqual(['<', '>', '&', '"', '"']);
    expect(decodeHtmlEntity('&#39;')).toBe("'");
    expect(decodeHtmlEntity('&#x1F600;')).toBe('😀');
    expect(decodeHtmlEntity('&AMP;')).toBe('&');
  });

  it('keeps a named entity it does not write as it is', () => {
    expect(decodeHtmlEntity('&nbsp;')).toBe('&nbsp;');
  });
});
