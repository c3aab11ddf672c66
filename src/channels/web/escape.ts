/** Escaping of text put into the web chat's HTML (its own file: the highlighter and the Markdown renderer both use it). */

/** Text made safe to put between tags or in a quoted attribute. */
export function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
