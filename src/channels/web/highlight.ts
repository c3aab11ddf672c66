/**
 * Syntax highlighting of code blocks for the web chat, on the server, with highlight.js and its
 * common set (about 35 languages: the ones an agent's answers mostly hold; not all ~190, which
 * would weigh on the bundle and start-up). highlight.js escapes every piece of the code and wraps tokens in
 * `<span class="hljs-…">`, so the output holds no markup but those spans; sanitize-html checks it
 * again (`html.ts`). An unknown language stays plain, escaped text.
 */
import { createRequire } from 'node:module';
import { escapeText } from './escape.js';

/**
 * The part of highlight.js used here. The package is loaded with `require`, not `import`, for two
 * reasons: its type definitions reference the DOM library (`/// <reference lib="dom" />`), which
 * would give the whole server the browser's `Headers` and `FormData` in place of Node's; and it
 * loads on the first code block rather than at start-up (about 35 language files, ~50 ms).
 */
interface HighlightJs {
  registerAliases(aliases: string | string[], options: { languageName: string }): void;
  getLanguage(name: string): object | undefined;
  highlight(code: string, options: { language: string; ignoreIllegals?: boolean }): { value: string };
}

let loaded: HighlightJs | undefined;
function hljs(): HighlightJs {
  if (!loaded) {
    loaded = createRequire(import.meta.url)('highlight.js/lib/common') as HighlightJs;
    // Fence words people write that the definitions do not list as aliases (TOML reads as INI).
    loaded.registerAliases(['toml'], { languageName: 'ini' });
    loaded.registerAliases(['sharp'], { languageName: 'csharp' });
  }
  return loaded;
}

/** Whether a language (the word after the code fence, or one of its aliases) is one that is coloured. */
export function knownLanguage(lang: string): boolean {
  return lang !== '' && hljs().getLanguage(lang) !== undefined;
}

/**
 * Longest code block coloured (characters): a streamed answer is rendered again at every update,
 * and colouring costs about a millisecond per kilobyte; a longer block is shown plain.
 */
export const MAX_HIGHLIGHT_CHARS = 50_000;

/**
 * The code as HTML: escaped, with the tokens of its language in `<span class="hljs-…">`. An
 * unknown language (or none), or code over {@link MAX_HIGHLIGHT_CHARS}, gives the escaped code alone.
 */
export function highlight(code: string, lang: string): string {
  if (!knownLanguage(lang) || code.length > MAX_HIGHLIGHT_CHARS) return escapeText(code);
  // ignoreIllegals: a half-streamed or odd block is coloured as far as it goes, never refused.
  return hljs().highlight(code, { language: lang, ignoreIllegals: true }).value;
}
