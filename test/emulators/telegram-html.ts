/**
 * Validation of Telegram's HTML parse mode, the way the Bot API rejects bad markup:
 * unknown or unbalanced tags, `expandable` on a tag other than `<blockquote>`, and stray `<`/`&`
 * give "Bad Request: can't parse entities: ...".
 * Returns the visible text (what Telegram counts against the 4096 limit) when valid.
 */

const ALLOWED = new Set([
  'b',
  'strong',
  'i',
  'em',
  'u',
  'ins',
  's',
  'strike',
  'del',
  'span',
  'tg-spoiler',
  'a',
  'code',
  'pre',
  'blockquote',
  'tg-emoji',
]);

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

/** Result of parsing a message in HTML parse mode. */
export type HtmlCheck = { ok: true; text: string } | { ok: false; description: string };

/** Parse `html` like Telegram does; `ok:false` carries Telegram's error description. */
export function checkTelegramHtml(html: string): HtmlCheck {
  const fail = (why: string): HtmlCheck => ({ ok: false, description: `Bad Request: can't parse entities: ${why}` });
  const stack: string[] = [];
  let text = '';
  let i = 0;
  const byteOffset = (n: number) => Buffer.byteLength(html.slice(0, n), 'utf8');
  while (i < html.length) {
    const ch = html[i];
    if (ch === '<') {
      const close = html.indexOf('>', i);
      if (close < 0) return fail(`Unclosed start tag at byte offset ${byteOffset(i)}`);
      const inner = html.slice(i + 1, close);
      if (inner.startsWith('/')) {
        const name = inner.slice(1).trim().toLowerCase();
        const open = stack.pop();
        if (open === undefined) return fail(`Unexpected end tag at byte offset ${byteOffset(i)}`);
        if (open !== name) {
          return fail(`Unmatched end tag at byte offset ${byteOffset(i)}, expected "</${open}>", found "</${name}>"`);
        }
      } else {
        const m = /^([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z-]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*$/.exec(
          inner,
        );
        if (!m) return fail(`Unsupported start tag "${inner.split(/\s/)[0] ?? ''}" at byte offset ${byteOffset(i)}`);
        const name = (m[1] as string).toLowerCase();
        if (!ALLOWED.has(name)) return fail(`Unsupported start tag "${name}" at byte offset ${byteOffset(i)}`);
        const attrs = m[2] ?? '';
        if (name === 'a' && !/href\s*=/.test(attrs)) {
          // Telegram accepts <a> without href as plain text; keep it strict for tests of our renderer.
          return fail(`Tag "a" must have attribute "href" at byte offset ${byteOffset(i)}`);
        }
        if (name === 'span' && !/class\s*=\s*"tg-spoiler"/.test(attrs)) {
          return fail(`Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(i)}`);
        }
        // `<blockquote expandable>` is a collapsed quote; the attribute exists on no other tag.
        if (/(?:^|\s)expandable\b/i.test(attrs) && name !== 'blockquote') {
          return fail(`Tag "${name}" can't have attribute "expandable" at byte offset ${byteOffset(i)}`);
        }
        if (name === 'blockquote' && stack.includes('blockquote')) {
          return fail(`Blockquote entities can't be nested at byte offset ${byteOffset(i)}`);
        }
        const top = stack[stack.length - 1];
        if ((top === 'pre' && name !== 'code') || top === 'code') {
          return fail(`Can't nest "${name}" inside "${top}" at byte offset ${byteOffset(i)}`);
        }
        stack.push(name);
      }
      i = close + 1;
      continue;
    }
    if (ch === '&') {
      const m = /^&(#[0-9]{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z]+);/.exec(html.slice(i, i + 12));
      if (!m) return fail(`Character entity expected at byte offset ${byteOffset(i)}`);
      const ent = m[1] as string;
      if (ent.startsWith('#x')) text += String.fromCodePoint(Number.parseInt(ent.slice(2), 16));
      else if (ent.startsWith('#')) text += String.fromCodePoint(Number.parseInt(ent.slice(1), 10));
      else {
        const v = NAMED[ent.toLowerCase()];
        if (v === undefined) return fail(`Unsupported HTML entity "&${ent};" at byte offset ${byteOffset(i)}`);
        text += v;
      }
      i += m[0].length;
      continue;
    }
    if (ch === '>') return fail(`Unexpected ">" at byte offset ${byteOffset(i)}`);
    text += ch;
    i++;
  }
  if (stack.length > 0) return fail(`Can't find end tag corresponding to start tag "${stack[stack.length - 1]}"`);
  return { ok: true, text };
}
