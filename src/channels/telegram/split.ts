/**
 * Telegram's side of splitting rendered HTML: its limits, measured on the visible text (entities
 * decoded, tags removed) in UTF-16 units, and the cut of one long block, where a cut inside open
 * tags (a code block, bold text) closes them at the end of one chunk and reopens them at the start
 * of the next. The packing policy is the shared one in `delivery/split.ts`.
 */
import { type Markup, type MessageLimits, packBlocks as pack, pickCut } from '../../delivery/split.js';

/** Telegram's limit for message text. */
export const TELEGRAM_TEXT_LIMIT = 4096;

/** What the packer may fill: one part per message, 4000 visible characters (headroom under 4096). */
export const telegramLimits: MessageLimits = { partUnits: 4000, partsPerMessage: 1, messageUnits: 4000 };

type Piece = { kind: 'open'; name: string; raw: string } | { kind: 'close'; name: string; raw: string } | { kind: 'text'; raw: string; visible: string };

const ENTITY: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

function decodeEntity(raw: string): string {
  const body = raw.slice(1, -1);
  if (body.startsWith('#x')) return String.fromCodePoint(Number.parseInt(body.slice(2), 16));
  if (body.startsWith('#')) return String.fromCodePoint(Number.parseInt(body.slice(1), 10));
  return ENTITY[body.toLowerCase()] ?? raw;
}

/** Tokenise our own generated HTML: tags, entities (one visible char each) and plain characters. */
function tokenize(html: string): Piece[] {
  const out: Piece[] = [];
  const re = /<\/?([a-zA-Z][a-zA-Z0-9-]*)[^>]*>|&(?:#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);|[^<&]+|[<&]/g;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    const raw = m[0];
    if (m[1]) out.push({ kind: raw.startsWith('</') ? 'close' : 'open', name: m[1].toLowerCase(), raw });
    else if (raw.startsWith('&') && raw.length > 1) out.push({ kind: 'text', raw, visible: decodeEntity(raw) });
    else out.push({ kind: 'text', raw, visible: raw });
  }
  return out;
}

/** Visible text of Telegram HTML: tags dropped, entities decoded. Used for the plain-text fallback. */
export function htmlToPlain(html: string): string {
  return tokenize(html)
    .map((p) => (p.kind === 'text' ? p.visible : ''))
    .join('');
}

/** Visible length (UTF-16 units) of Telegram HTML. */
export function visibleLength(html: string): number {
  return htmlToPlain(html).length;
}

/** Break text pieces into single units (a character or an entity) so any cut point is possible. */
function units(pieces: Piece[]): Piece[] {
  const out: Piece[] = [];
  for (const p of pieces) {
    if (p.kind !== 'text' || p.raw.startsWith('&')) out.push(p);
    else for (const ch of p.raw) out.push({ kind: 'text', raw: ch, visible: ch });
  }
  return out;
}

/**
 * Split HTML so each chunk's visible text is at most `limit` characters. Chunks are balanced HTML.
 * @param limit default 4000, leaving headroom under Telegram's 4096.
 */
export function splitHtml(html: string, limit = telegramLimits.partUnits): string[] {
  if (visibleLength(html) <= limit) return html.trim() ? [html] : [];
  const all = units(tokenize(html));
  const chunks: string[] = [];
  let pos = 0;
  let reopen: Piece[] = [];
  while (pos < all.length) {
    // Walk forward until the visible budget is used, remembering the best cut points seen.
    let visible = 0;
    let i = pos;
    let cutPara = -1;
    let cutLine = -1;
    let cutSpace = -1;
    while (i < all.length) {
      const p = all[i] as Piece;
      if (p.kind === 'text') {
        if (visible + p.visible.length > limit) break;
        visible += p.visible.length;
        if (p.visible === '\n') {
          const prev = all[i - 1];
          if (prev && prev.kind === 'text' && prev.visible === '\n') cutPara = i + 1;
          cutLine = i + 1;
        } else if (p.visible === ' ') cutSpace = i + 1;
      }
      i++;
    }
    let end = i;
    if (i < all.length) {
      const cut = pickCut([cutPara, cutLine, cutSpace], pos + Math.floor((i - pos) / 3));
      if (cut >= 0) end = cut;
    }
    // Build the chunk: reopened tags, the slice, then close whatever is still open.
    const stack: Piece[] = [...reopen];
    let body = reopen.map((p) => p.raw).join('');
    for (let k = pos; k < end; k++) {
      const p = all[k] as Piece;
      body += p.raw;
      if (p.kind === 'open') stack.push(p);
      else if (p.kind === 'close') {
        const idx = stack.map((s) => (s.kind === 'text' ? '' : s.name)).lastIndexOf(p.name);
        if (idx >= 0) stack.splice(idx, 1);
      }
    }
    // Trailing newlines at a cut are noise; inside <pre> they would show as blank lines.
    body = body.replace(/\n+$/, '');
    for (let k = stack.length - 1; k >= 0; k--) {
      const open = stack[k] as Piece;
      if (open.kind !== 'text') body += `</${open.name}>`;
    }
    if (htmlToPlain(body).trim().length > 0) chunks.push(body);
    reopen = stack;
    pos = end;
    // Skip newlines right after a cut so the next chunk does not start blank.
    while (pos < all.length && (all[pos] as Piece).kind === 'text' && (all[pos] as Piece & { visible: string }).visible === '\n') pos++;
  }
  return chunks;
}

/** Telegram HTML blocks for the packer: measured in visible characters, cut by {@link splitHtml}. */
const telegramHtml: Markup<string> = {
  measure: visibleLength,
  join: (a, b) => (a ? `${a}\n\n${b}` : b),
  cut: splitHtml,
};

/**
 * Pack rendered blocks into as few messages as fit, joining blocks with a blank line; a block
 * too long on its own is split with {@link splitHtml}.
 */
export function packBlocks(blocks: string[], limit = telegramLimits.partUnits): string[] {
  const out = pack(blocks, limit, telegramHtml).filter((html) => html !== '');
  // A part of nothing but whitespace would be an empty message, which Telegram refuses.
  if (out.length && !out.at(-1)?.trim()) out.pop();
  return out;
}
