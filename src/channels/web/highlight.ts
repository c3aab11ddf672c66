/**
 * Syntax highlighting of code blocks for the web chat, on the server: a small tokenizer per
 * family of languages (C-like, Python, shell, SQL, data files, diffs) that wraps comments,
 * strings, numbers, keywords and literals in `<span class="hl-…">`. Every piece of the code is
 * escaped here, so the output holds no markup but those spans (sanitize-html checks it again).
 *
 * Why not a library: none is installed (highlight.js would be the one to add); this covers what
 * an agent's answers mostly hold, and unknown languages stay plain, escaped text.
 */
import { escapeText } from './escape.js';

/** The token classes the stylesheet colours. */
export type HighlightClass = 'comment' | 'string' | 'number' | 'keyword' | 'literal' | 'added' | 'removed' | 'meta';

/** One rule: a regex anchored (sticky) at the current place, and the class of what it matches. */
interface Rule {
  re: RegExp;
  cls: HighlightClass | null;
}

const words = (list: string) => new RegExp(`\\b(?:${list.trim().split(/\s+/).join('|')})\\b`, 'y');

const NUMBER: Rule = {
  re: /\b(?:0[xX][\da-fA-F_]+|0[bB][01_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\b/y,
  cls: 'number',
};
const DQ: Rule = { re: /"(?:[^"\\\n]|\\.)*"?/y, cls: 'string' };
const SQ: Rule = { re: /'(?:[^'\\\n]|\\.)*'?/y, cls: 'string' };
const BLOCK_COMMENT: Rule = { re: /\/\*[\s\S]*?(?:\*\/|$)/y, cls: 'comment' };
const LINE_COMMENT: Rule = { re: /\/\/.*/y, cls: 'comment' };
const HASH_COMMENT: Rule = { re: /#.*/y, cls: 'comment' };
const C_LITERALS = words('true false null undefined nil None True False NaN Infinity this self super');

const JS_KEYWORDS = words(`
  abstract as async await break case catch class const continue debugger declare default delete do else
  enum export extends finally for from function get if implements import in instanceof interface is let
  namespace new of private protected public readonly return satisfies set static switch throw try type
  typeof var void while with yield keyof`);
const C_KEYWORDS = words(`
  auto break case catch char class const constexpr continue default defer delete do double else enum
  extern fallthrough final float fn for func go goto if impl import in int interface let long loop match
  mod move mut namespace new package private protected pub public range return select short signed sizeof
  static struct switch template throw trait try type typedef union unsafe unsigned use using var virtual
  void volatile where while chan map string bool byte rune crate dyn ref async await override val when
  object fun is as`);
const PY_KEYWORDS = words(`
  and as assert async await break class continue def del elif else except finally for from global if
  import in is lambda match case nonlocal not or pass raise return try while with yield print`);
const SH_KEYWORDS = words(`
  if then else elif fi for while until do done case esac in function return exit export local readonly
  set unset source alias echo cd sudo`);
const SQL_KEYWORDS = new RegExp(
  `\\b(?:${`select from where and or not insert into values update set delete create table drop alter
  add column index primary key foreign references join left right inner outer full on as group by order
  having limit offset union all distinct case when then else end is null like in exists between returning
  begin commit rollback transaction with default unique check constraint view trigger if cascade asc desc
  integer text varchar boolean bigint serial timestamp`
    .trim()
    .split(/\s+/)
    .join('|')})\\b`,
  'iy',
);

const C_LIKE: Rule[] = [
  BLOCK_COMMENT,
  LINE_COMMENT,
  DQ,
  SQ,
  { re: /`(?:[^`\\]|\\.)*`?/y, cls: 'string' },
  NUMBER,
  { re: C_LITERALS, cls: 'literal' },
];

/** The rules of each family; a language name maps to one below. */
const FAMILIES: Record<string, Rule[]> = {
  js: [...C_LIKE, { re: JS_KEYWORDS, cls: 'keyword' }],
  c: [
    { re: /#\s*(?:include|define|ifn?def|endif|pragma|if|else)\b.*/y, cls: 'meta' },
    ...C_LIKE,
    { re: C_KEYWORDS, cls: 'keyword' },
  ],
  python: [
    HASH_COMMENT,
    { re: /(?:[rRbBfFuU]{1,2})?(?:"""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$))/y, cls: 'string' },
    { re: /(?:[rRbBfFuU]{1,2})?(?:"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)/y, cls: 'string' },
    { re: /@[\w.]+/y, cls: 'meta' },
    NUMBER,
    { re: C_LITERALS, cls: 'literal' },
    { re: PY_KEYWORDS, cls: 'keyword' },
  ],
  shell: [
    { re: /^\s*\$(?= )/my, cls: 'meta' },
    HASH_COMMENT,
    DQ,
    SQ,
    { re: /\$(?:\{[^}\n]*\}?|\w+|[@#?$!*0-9])/y, cls: 'literal' },
    { re: SH_KEYWORDS, cls: 'keyword' },
    { re: /(?<=\s)--?[\w-]+/y, cls: 'meta' },
  ],
  sql: [
    { re: /--.*/y, cls: 'comment' },
    BLOCK_COMMENT,
    SQ,
    { re: /"(?:[^"\n])*"?/y, cls: 'string' },
    NUMBER,
    { re: SQL_KEYWORDS, cls: 'keyword' },
  ],
  data: [
    HASH_COMMENT,
    LINE_COMMENT,
    { re: /"(?:[^"\\\n]|\\.)*"(?=\s*:)/y, cls: 'keyword' },
    { re: /^\s*[\w.-]+(?=\s*[:=])/my, cls: 'keyword' },
    { re: /^\s*\[[^\]\n]*\]/my, cls: 'meta' },
    DQ,
    SQ,
    NUMBER,
    { re: /\b(?:true|false|null|yes|no|on|off|~)\b/y, cls: 'literal' },
  ],
  diff: [
    { re: /^(?:\+\+\+|---).*$/my, cls: 'meta' },
    { re: /^@@.*$/my, cls: 'meta' },
    { re: /^\+.*$/my, cls: 'added' },
    { re: /^-.*$/my, cls: 'removed' },
  ],
};

/** Language names (as written after the fence) → family. */
const LANGUAGES: Record<string, string> = {};
for (const [family, names] of Object.entries({
  js: 'js javascript jsx mjs cjs ts typescript tsx node',
  c: 'c h cpp cc hpp cs csharp java kotlin kt go golang rust rs swift scala dart php',
  python: 'py python python3 py3',
  shell: 'sh bash shell zsh console shell-session fish ksh',
  sql: 'sql psql postgres postgresql sqlite mysql',
  data: 'json jsonc json5 yaml yml toml ini conf env properties',
  diff: 'diff patch',
}))
  for (const n of names.split(' ')) LANGUAGES[n] = family;

/** Whether a language (the word after the code fence) is one this highlighter colours. */
export function knownLanguage(lang: string): boolean {
  return LANGUAGES[lang.toLowerCase()] !== undefined;
}

/**
 * Longest code block coloured (characters): a streamed answer is rendered again at every update,
 * and colouring costs about a millisecond per kilobyte; a longer block is shown plain.
 */
export const MAX_HIGHLIGHT_CHARS = 50_000;

/**
 * The code as HTML: escaped, with the tokens of its language in `<span class="hl-…">`. An
 * unknown language (or none), or code over {@link MAX_HIGHLIGHT_CHARS}, gives the escaped code alone.
 */
export function highlight(code: string, lang: string): string {
  const rules = FAMILIES[LANGUAGES[lang.toLowerCase()] ?? ''];
  if (!rules || code.length > MAX_HIGHLIGHT_CHARS) return escapeText(code);
  let out = '';
  let plain = '';
  let i = 0;
  while (i < code.length) {
    let matched = false;
    // A token starts only where a word does not go on from the character before it.
    if (i === 0 || !/\w/.test(code[i - 1]!) || !/\w/.test(code[i]!)) {
      for (const rule of rules) {
        rule.re.lastIndex = i;
        const m = rule.re.exec(code);
        if (!m || m[0].length === 0) continue;
        out += escapeText(plain);
        plain = '';
        out += rule.cls ? `<span class="hl-${rule.cls}">${escapeText(m[0])}</span>` : escapeText(m[0]);
        i += m[0].length;
        matched = true;
        break;
      }
    }
    if (!matched) {
      // Skip a whole word at once: keywords are found only at its start.
      const word = /\w+/y;
      word.lastIndex = i;
      const w = word.exec(code);
      const step = w ? w[0].length : 1;
      plain += code.slice(i, i + step);
      i += step;
    }
  }
  return out + escapeText(plain);
}
