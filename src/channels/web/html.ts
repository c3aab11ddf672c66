/**
 * Model Markdown → HTML for the page: marked renders the same token tree the other channels walk,
 * with code blocks highlighted here (`highlight.ts`), then sanitize-html keeps a small set of
 * tags. No scripts, styles, event handlers, images or SVG; links only to http(s)/mailto and opened
 * with `rel="noopener noreferrer"`; code stays code.
 */
import { marked, Renderer, type Token, type Tokens } from 'marked';
import sanitizeHtml from 'sanitize-html';
import { escapeText } from './escape.js';
import { highlight } from './highlight.js';

export { escapeText } from './escape.js';

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
    // the highlighter's tokens inside code blocks
    'span',
  ],
  allowedAttributes: {
    a: ['href', 'title', 'rel', 'target'],
    code: ['class'],
    span: ['class'],
    ol: ['start'],
    th: ['align'],
    td: ['align'],
    // GFM task lists: a disabled checkbox
    input: ['type', 'checked', 'disabled'],
  },
  allowedClasses: { code: [/^language-[\w-]+$/], span: [/^hljs-[\w-]+$/, /^[a-z]+_$/] },
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

/** The word after a code fence as a class name: letters, digits, `+`, `#`, `-` only (`c++` → `cpp`). */
function languageOf(lang: string | undefined): string {
  const word = (lang ?? '').trim().split(/\s+/)[0] ?? '';
  return word
    .toLowerCase()
    .replace(/\+/g, 'p')
    .replace(/#/g, 'sharp')
    .replace(/[^\w-]/g, '')
    .slice(0, 30);
}

/** marked's renderer with code blocks highlighted (the code is escaped by the highlighter). */
const renderer = new Renderer();
renderer.code = ({ text, lang }: Tokens.Code): string => {
  const language = languageOf(lang);
  const cls = language ? ` class="language-${language}"` : '';
  return `<pre><code${cls}>${highlight(`${text.replace(/\n$/, '')}\n`, language)}</code></pre>\n`;
};

/** Sanitised HTML of parsed Markdown (`title`: a bold first line, as notifications have). */
export function markdownHtml(tokens: Token[], title?: string): string {
  const body = marked.parser(tokens, { gfm: true, async: false, renderer }) as string;
  const head = title ? `<p><strong>${escapeText(title)}</strong></p>` : '';
  return sanitizeHtml(head + body, OPTIONS);
}
