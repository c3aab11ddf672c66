/**
 * The `code` spans of a sentence the program wrote (an error, a notice, what an "always" grant
 * covers): found with marked's inline lexer, the Markdown parser every channel uses, and nothing
 * else read as Markdown (such text may hold `*` or `_` that are not emphasis). Where code can be
 * shown it is a code span; where only plain text can (a button), it is quoted.
 */
import { Lexer } from 'marked';
import type { Span } from './views.js';

/** `text` as spans: each code span as `{ code }`, everything else exactly as written. */
export function codeSpans(text: string): Span[] {
  const spans: Span[] = [];
  let plain = '';
  for (const token of Lexer.lexInline(text, { gfm: true })) {
    if (token.type === 'codespan') {
      if (plain) spans.push(plain);
      plain = '';
      spans.push({ code: (token as { text: string }).text });
    } else plain += token.raw;
  }
  if (plain) spans.push(plain);
  return spans;
}

/** `text` for a place without markup (a button's label): each code span in quotes, “ls -la”. */
export function quotedCode(text: string): string {
  return codeSpans(text)
    .map((s) => (typeof s === 'string' ? s : 'code' in s ? `“${s.code}”` : ''))
    .join('');
}
