/**
 * From stored content to platform messages: one Markdown parse (marked's lexer, GFM) for every
 * platform, then the platform's emitter.
 */
import { createHash } from 'node:crypto';
import { marked, type Token } from 'marked';
import type { DeliveryContent } from '../contract/content.js';
import type { Part, Surface } from '../contract/surface.js';

/** Parse model Markdown once; emitters walk the tokens. */
export function parseMarkdown(markdown: string): Token[] {
  return marked.lexer(markdown, { gfm: true });
}

/** Live extras that are shown but never stored (the output tail of a running tool). */
export interface LiveExtras {
  tail?: string;
}

/** The messages that show `content` on a surface (attachments are uploads, not parts). */
export function renderContent(surface: Surface, content: DeliveryContent, extras: LiveExtras = {}): Part[] {
  const e = surface.emitter;
  switch (content.type) {
    case 'text':
      if (!content.markdown.trim() && !content.title) return [];
      return e.markdown(parseMarkdown(content.markdown), content.title, content.buttons);
    case 'notice':
      return e.notice(content);
    case 'approval':
      return e.approval(content);
    case 'question':
      return e.question(content);
    case 'tool':
      return e.tool(content, extras.tail);
    case 'attachment':
      return [];
  }
}

/** A short fingerprint of what a message shows, to skip edits that change nothing. */
export function fingerprint(part: Part): string {
  return createHash('sha1').update(JSON.stringify(part.body)).digest('base64url').slice(0, 16);
}

/** One platform message of a delivery: its reference and the fingerprint of what it shows. */
export interface SentRef {
  ref: string;
  shown: string;
}

/** Parse a stored refs column. */
export function parseRefs(raw: string | null | undefined): SentRef[] {
  if (!raw) return [];
  try {
    const v = JSON.parse(raw) as unknown;
    return Array.isArray(v)
      ? v.filter((r): r is SentRef => typeof r?.ref === 'string' && typeof r?.shown === 'string')
      : [];
  } catch {
    return [];
  }
}
