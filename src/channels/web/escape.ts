/** Escaping of text put into the web chat's HTML (its own file: the highlighter and the Markdown renderer both use it). */

/** Text made safe to put between tags or in a quoted attribute (the kit's, shared with Telegram's HTML). */
export { escapeHtml as escapeText } from '../../kit/index.js';
