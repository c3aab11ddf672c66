/**
 * Model Markdown → HTML for the page: marked renders the same token tree the other channels walk,
 * then sanitize-html keeps a small set of tags. No scripts, styles, event handlers, images or SVG;
 * links only to http(s)/mailto and opened with `rel="noopener noreferrer"`; code stays code.
 */
import { marked, type Token } from 'marked';
import sanitizeHtml from 'sanitize-html';

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [
    'p',
    'br',
    'hr',
    'strong',
    'em',
    'del',
    'code',
    'pre',
    'blockquote',
    'ul',
    'ol',
    'li',
    'a',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'table',
    'thead',
    'tbody',
    'tr',
    'th',
    'td',
    'input',
  ],
  allowedAttributes: {
    a: ['href', 'title', 'rel', 'target'],
    code: ['class'],
    ol: ['start'],
    th: ['align'],
    td: ['align'],
    // GFM task lists: a disabled checkbox
    input: ['type', 'checked', 'disabled'],
  },
  allowedClasses: { code: [/^language-[\w-]+$/] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  // What is dropped goes with its content only for these (their text is never meant to be read).
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'svg', 'math'],
  disallowedTagsMode: 'discard',
  transformTags: {
    // A link to anything but http(s)/mailto (javascript:, data:, a relative path) keeps its text
    // and loses its href: an <a> without href is no link.
    a: (tagName, attribs) =>
      /^(https?:\/\/|mailto:)/i.test((attribs.href ?? '').trim())
        ? {
            tagName,
            attribs: {
              href: attribs.href ?? '',
              ...(attribs.title ? { title: attribs.title } : {}),
              rel: 'noopener noreferrer',
              target: '_blank',
            },
          }
        : { tagName, attribs: {} },
    input: (tagName, attribs) =>
      attribs.type === 'checkbox'
        ? { tagName, attribs: { ...attribs, disabled: '' } }
        : { tagName: 'span', attribs: {} },
  },
};

/** Sanitised HTML of parsed Markdown (`title`: a bold first line, as notifications have). */
export function markdownHtml(tokens: Token[], title?: string): string {
  const body = marked.parser(tokens, { gfm: true, async: false }) as string;
  const head = title ? `<p><strong>${escapeText(title)}</strong></p>` : '';
  return sanitizeHtml(head + body, OPTIONS);
}

/** Text made safe to put between tags. */
export function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
