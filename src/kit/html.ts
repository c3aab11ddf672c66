/**
 * Text in HTML, as channels that send or draw it need it (Telegram's HTML messages, the web
 * chat's pages): escaping text put into it, and reading an entity back as the character it shows
 * (measuring and cutting HTML by its visible text, `delivery/cut.ts`'s `angleMarkup`).
 */

/** Text made safe between tags or in a quoted attribute (`&`, `<`, `>` and `"` escaped). */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The named entities {@link escapeHtml} writes. */
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

/**
 * The character an entity (`&amp;`, `&#39;`, `&#x1F600;`) shows; a named one not written by
 * {@link escapeHtml} stays as written.
 */
export function decodeHtmlEntity(entity: string): string {
  const body = entity.slice(1, -1);
  if (body.startsWith('#x')) return String.fromCodePoint(Number.parseInt(body.slice(2), 16));
  if (body.startsWith('#')) return String.fromCodePoint(Number.parseInt(body.slice(1), 10));
  return NAMED[body.toLowerCase()] ?? entity;
}
