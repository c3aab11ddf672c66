/**
 * The cut of one rendered block too long for a message part, for every channel's markup: walk
 * the block's pieces until the part's budget is used, cut after the last blank line, else line,
 * else space past a third of the way (else where the budget ends), and close whatever is open at
 * the cut — a code block, bold text, a quote — at the end of one part and reopen it at the start
 * of the next. A channel supplies only its markup's pieces ({@link Piece}): what opens and closes,
 * what is one indivisible unit (an HTML entity, a Slack link) and how many units each takes.
 */
import { pickCut } from './split.js';

/** A piece of rendered markup as the cutter sees it. */
export type Piece =
  /** Opens a construct (a tag, a code fence); `closer` is the markup that closes it. */
  | { kind: 'open'; name: string; raw: string; closer: string }
  | { kind: 'close'; name: string; raw: string }
  /**
   * Shown text, `visible.length` units. An `atomic` piece (an entity, a link) is never cut inside
   * while it fits a part; any other text piece is a run whose `visible` is its `raw`.
   */
  | { kind: 'text'; raw: string; visible: string; atomic?: boolean };

/** How a channel's markup reads as pieces (open and close markers take no units of the budget). */
export type Tokenizer = (markup: string) => Piece[];

/** The text a piece list shows (markers dropped, entities decoded). */
export function visibleText(pieces: readonly Piece[]): string {
  let out = '';
  for (const p of pieces) if (p.kind === 'text') out += p.visible;
  return out;
}

/** A place in a piece list: before piece `p`, or inside a run, before its UTF-16 offset `o`. */
interface At {
  p: number;
  o: number;
}

/** A place a part may end, and how many units a part ending there holds. */
interface Cut {
  at: At;
  units: number;
}

/** A surrogate pair's half: a run holding one is walked character by character. */
const SURROGATE = /[\ud800-\udfff]/;

/** Whether a cut may fall inside `q` (a run, or an atomic piece wider than a whole part). */
function isRun(q: Piece, limit: number): boolean {
  return q.kind === 'text' && !(q.atomic && q.visible.length <= limit);
}

/** UTF-16 units of the character at `o` (2 for a surrogate pair). */
function charWidth(raw: string, o: number): number {
  const c = raw.charCodeAt(o);
  if (c >= 0xd800 && c <= 0xdbff && o + 1 < raw.length) {
    const d = raw.charCodeAt(o + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 2;
  }
  return 1;
}

/** The place `o` in piece `p`, moved to the next piece at the end of this one. */
function place(pieces: readonly Piece[], p: number, o: number): At {
  return o > 0 && o >= (pieces[p] as Piece).raw.length ? { p: p + 1, o: 0 } : { p, o };
}

/** The place one unit after `at` (a character of a run, else the whole piece). */
function nextUnit(pieces: readonly Piece[], at: At, limit: number): At {
  const q = pieces[at.p] as Piece;
  return isRun(q, limit) ? place(pieces, at.p, at.o + charWidth(q.raw, at.o)) : { p: at.p + 1, o: 0 };
}

/** Whether the unit at `at` is a line break. */
function atNewline(pieces: readonly Piece[], at: At, limit: number): boolean {
  const q = pieces[at.p];
  if (q?.kind !== 'text') return false;
  return isRun(q, limit) ? q.raw.charCodeAt(at.o) === 10 : q.visible === '\n';
}

/**
 * Where the part starting at `start` ends: walk until `limit` units are used, then take the last
 * blank line, else line, else space seen past a third of the units walked; else the budget's end.
 */
function partEnd(pieces: readonly Piece[], start: At, limit: number): At {
  const n = pieces.length;
  let visible = 0;
  let units = 0;
  let prevNewline = false;
  let para: Cut | undefined;
  let line: Cut | undefined;
  let space: Cut | undefined;
  let at = start;
  walk: while (at.p < n) {
    const q = pieces[at.p] as Piece;
    if (q.kind !== 'text') {
      units++;
      prevNewline = false;
      at = { p: at.p + 1, o: 0 };
      continue;
    }
    const raw = q.raw;
    if (isRun(q, limit) && !SURROGATE.test(raw)) {
      // One unit per UTF-16 unit: search the run natively.
      const o = at.o;
      const stop = o + Math.min(raw.length - o, limit - visible);
      const nl = stop > o ? raw.lastIndexOf('\n', stop - 1) : -1;
      if (nl >= o) {
        line = { at: place(pieces, at.p, nl + 1), units: units + nl + 1 - o };
        const pp = stop - o > 1 ? raw.lastIndexOf('\n\n', stop - 2) : -1;
        if (pp >= o) para = { at: place(pieces, at.p, pp + 2), units: units + pp + 2 - o };
        else if (prevNewline && raw.charCodeAt(o) === 10) para = { at: place(pieces, at.p, o + 1), units: units + 1 };
      }
      const sp = stop > o ? raw.lastIndexOf(' ', stop - 1) : -1;
      if (sp >= o) space = { at: place(pieces, at.p, sp + 1), units: units + sp + 1 - o };
      if (stop > o) prevNewline = raw.charCodeAt(stop - 1) === 10;
      visible += stop - o;
      units += stop - o;
      at = place(pieces, at.p, stop);
      if (stop < raw.length) break;
      continue;
    }
    const run = isRun(q, limit);
    let o = at.o;
    do {
      const w = run ? charWidth(raw, o) : q.visible.length;
      if (visible + w > limit) {
        at = { p: at.p, o };
        break walk;
      }
      const c = run ? raw.charCodeAt(o) : q.visible.length === 1 ? q.visible.charCodeAt(0) : -1;
      visible += w;
      units++;
      o = run ? o + w : raw.length;
      if (c === 10) {
        const cut = { at: place(pieces, at.p, o), units };
        if (prevNewline) para = cut;
        line = cut;
        prevNewline = true;
      } else {
        prevNewline = false;
        if (c === 32) space = { at: place(pieces, at.p, o), units };
      }
    } while (o < raw.length);
    at = { p: at.p + 1, o: 0 };
  }
  if (at.p >= n) return at;
  const best = pickCut([para?.units ?? -1, line?.units ?? -1, space?.units ?? -1], Math.floor(units / 3));
  const chosen = [para, line, space].find((c) => c !== undefined && c.units === best);
  if (best >= 0 && chosen) return chosen.at;
  // A unit wider than the whole budget still moves the cut on.
  return at.p === start.p && at.o === start.o ? nextUnit(pieces, start, limit) : at;
}

/**
 * `markup` cut into parts whose shown text is at most `limit` units, each balanced on its own.
 * Markup that fits is returned whole (none when it shows only whitespace).
 */
export function cutMarkup(markup: string, limit: number, tokenize: Tokenizer): string[] {
  const pieces = tokenize(markup);
  if (visibleText(pieces).length <= limit) return markup.trim() ? [markup] : [];
  const n = pieces.length;
  const chunks: string[] = [];
  let start: At = { p: 0, o: 0 };
  let reopen: Piece[] = [];
  while (start.p < n) {
    const end = partEnd(pieces, start, limit);
    // Build the part: reopened constructs, the slice, then close whatever is still open.
    const stack: Piece[] = [...reopen];
    let body = '';
    for (const q of reopen) body += q.raw;
    let shown = '';
    for (let k = start.p; k < end.p || (k === end.p && end.o > 0); k++) {
      const q = pieces[k] as Piece;
      if (q.kind === 'text') {
        const text = isRun(q, limit)
          ? q.raw.slice(k === start.p ? start.o : 0, k === end.p ? end.o : q.raw.length)
          : q.raw;
        body += text;
        shown += text === q.raw ? q.visible : text;
        continue;
      }
      body += q.raw;
      if (q.kind === 'open') stack.push(q);
      else {
        const idx = stack.findLastIndex((s) => s.kind === 'open' && s.name === q.name);
        if (idx >= 0) stack.splice(idx, 1);
      }
    }
    // Trailing newlines at a cut are noise; inside a code block they would show as blank lines.
    let e = body.length;
    while (e > 0 && body.charCodeAt(e - 1) === 10) e--;
    body = body.slice(0, e);
    for (let k = stack.length - 1; k >= 0; k--) {
      const open = stack[k] as Piece;
      if (open.kind === 'open') body += open.closer;
    }
    if (shown.trim().length > 0) chunks.push(body);
    reopen = stack;
    start = end;
    // Skip newlines right after a cut so the next part does not start blank.
    while (start.p < n && atNewline(pieces, start, limit)) start = nextUnit(pieces, start, limit);
  }
  return chunks;
}

/** A tag or link (`<…>`; group 1: a tag's name), an entity (`&…;`), a run of other text, or a lone `<` or `&`. */
const ANGLE = /<\/?([a-zA-Z][a-zA-Z0-9-]*)?[^<>]*>|&(?:#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);|[^<&]+|[<&]/g;

/**
 * A tokenizer for markup written with `<…>` and `&…;`, as Telegram's HTML and Slack's mrkdwn are:
 * entities are atomic, shown as `decode` gives them (default: as written, so each character counts);
 * with `tags`, `<name …>` and `</name>` open and close a construct that takes no units, else every
 * `<…>` (a Slack link or mention) is one atomic piece counted in full.
 */
export function angleMarkup(options: { tags: boolean; decode?: (entity: string) => string }): Tokenizer {
  const { tags, decode } = options;
  return (markup) => {
    const out: Piece[] = [];
    ANGLE.lastIndex = 0;
    for (let m = ANGLE.exec(markup); m; m = ANGLE.exec(markup)) {
      const raw = m[0];
      if (raw.length === 1 || (raw[0] !== '<' && raw[0] !== '&')) out.push({ kind: 'text', raw, visible: raw });
      else if (raw[0] === '&') out.push({ kind: 'text', raw, visible: decode ? decode(raw) : raw, atomic: true });
      else if (!tags || !m[1]) out.push({ kind: 'text', raw, visible: raw, atomic: true });
      else {
        const name = m[1].toLowerCase();
        out.push(raw[1] === '/' ? { kind: 'close', name, raw } : { kind: 'open', name, raw, closer: `</${name}>` });
      }
    }
    return out;
  };
}
