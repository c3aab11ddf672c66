/**
 * Images to the model. A photo or image file a user sends is saved under `uploads/` (the channels
 * do that) and named in the user message; with `llm.vision` on, the newest ones are also sent as
 * `image_url` parts with a `data:` URL, decoded, auto-rotated, downscaled to `llm.vision_max_pixels`
 * and re-encoded as JPEG by `sharp` (which drops EXIF and other metadata). Images older than
 * `llm.vision_history_turns` user messages stay as their path note only. A file that does not
 * decode (corrupt bytes, not an image, a decompression bomb) is not sent; the chat is told in one
 * line and the caption still reaches the model. `auto`: an endpoint that refuses image content is
 * remembered per model (`settings`, key `vision.refused:<model>`) and asked again without it.
 */
import { createHash } from 'node:crypto';
import type { Config } from '../config.js';
import type { Db } from '../store/db.js';
import { getSetting, setSetting } from '../store/repos/conversations.js';
import { openEntry } from '../tools/confined/open.js';
import type { PathPolicy } from '../tools/path-policy.js';
import type { ChatMessage, ContentPart } from './llm.js';

/** File names the model may be shown as images. */
const IMAGE_FILE = /\.(jpe?g|png|webp|gif|avif|tiff?|heic|heif|bmp)$/i;
/** The note `insertUserMessage` appends: `[Files the user sent, in the workspace: a, b]`. */
const FILES_NOTE = /\[Files the user sent, in the workspace: ([^\]]+)\]\s*$/;
/** Larger sources are refused before decoding (a decompression bomb of huge dimensions). */
const MAX_INPUT_PIXELS = 40_000_000;
/** Larger image files are not read (the channels take at most 50 MB). */
const MAX_IMAGE_BYTES = 64 * 1024 * 1024;
/** Prepared images kept in memory (each a data URL of up to a few hundred KB). */
const CACHE_SIZE = 32;

/** A prepared image, or why it cannot be shown. */
export type PreparedImage = { ok: true; url: string; width: number; height: number } | { ok: false; reason: string };

/** Workspace-relative image paths named in a user message's files note. */
export function imagesOf(content: string): string[] {
  const m = FILES_NOTE.exec(content);
  if (!m?.[1]) return [];
  return m[1]
    .split(',')
    .map((s) => s.trim())
    .filter((s) => IMAGE_FILE.test(s));
}

/** True when an HTTP 400 of the endpoint names image content (a model without vision). */
export function refusesImages(message: string): boolean {
  return /HTTP 400/.test(message) && /image|content.?type|multimodal|vision|modalit/i.test(message);
}

/** One image (its bytes) decoded, downscaled to `maxPixels` and re-encoded as JPEG without metadata. */
export async function prepareImage(image: Buffer, maxPixels: number): Promise<PreparedImage> {
  const { default: sharp } = await import('sharp');
  try {
    const meta = await sharp(image, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' }).metadata();
    if (!meta.width || !meta.height) return { ok: false, reason: 'not a readable image' };
    const scale = Math.min(1, Math.sqrt(maxPixels / (meta.width * meta.height)));
    // `rotate()` first: EXIF orientation applies before the metadata is dropped.
    const { data, info } = await sharp(image, {
      limitInputPixels: MAX_INPUT_PIXELS,
      failOn: 'error',
      animated: false,
    })
      .rotate()
      .resize({
        width: Math.max(1, Math.floor(meta.width * scale)),
        height: Math.max(1, Math.floor(meta.height * scale)),
        fit: 'inside',
      })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: 85 })
      .toBuffer({ resolveWithObject: true });
    return {
      ok: true,
      url: `data:image/jpeg;base64,${data.toString('base64')}`,
      width: info.width,
      height: info.height,
    };
  } catch (err) {
    const text = (err as Error).message ?? String(err);
    if (/pixel limit/i.test(text)) return { ok: false, reason: 'its dimensions are too large to decode safely' };
    return { ok: false, reason: 'it is not a readable image' };
  }
}

/** What {@link Vision.decorate} did besides adding image parts. */
export interface Decorated {
  messages: ChatMessage[];
  /** Images not sent, with the reason (the chat is told once per file). */
  failed: Array<{ file: string; reason: string }>;
  /** True when at least one image part was added. */
  withImages: boolean;
}

/** Vision state of one core: which models refused images, prepared images. */
export class Vision {
  private readonly refused = new Set<string>();
  private readonly checked = new Set<string>();
  private readonly cache = new Map<string, Promise<PreparedImage>>();

  constructor(
    private readonly config: Config,
    private readonly db: Db,
    /** Images are read through the confined primitive: a note naming a path outside is refused. */
    private readonly paths: PathPolicy,
  ) {}

  /** True when images go to `model` now. */
  async enabledFor(model: string): Promise<boolean> {
    const mode = this.config.llm.vision;
    if (mode === 'off') return false;
    if (mode === 'on') return true;
    if (!this.checked.has(model)) {
      this.checked.add(model);
      if ((await getSetting(this.db, `vision.refused:${model}`)) !== undefined) this.refused.add(model);
    }
    return !this.refused.has(model);
  }

  private readonly descriptions = new Map<string, Promise<string>>();

  /** `describe(url)`, once per image while it is in memory (every later round reuses the text). */
  described(url: string, describe: (url: string) => Promise<string>): Promise<string> {
    const key = createHash('sha256').update(url).digest('hex');
    let hit = this.descriptions.get(key);
    if (!hit) {
      hit = describe(url);
      // A failed description is tried again next time.
      hit.catch(() => this.descriptions.delete(key));
      if (this.descriptions.size >= 256) this.descriptions.delete(this.descriptions.keys().next().value as string);
      this.descriptions.set(key, hit);
    }
    return hit;
  }

  /** Remember that `model` refused image content (also for the next start). */
  async markRefused(model: string): Promise<void> {
    this.refused.add(model);
    await setSetting(this.db, `vision.refused:${model}`, String(Date.now()));
  }

  private prepared(rel: string): Promise<PreparedImage> {
    const key = `${rel}\n${this.config.llm.vision_max_pixels}`;
    let hit = this.cache.get(key);
    if (!hit) {
      hit = this.readImage(rel).then(
        (bytes) => prepareImage(bytes, this.config.llm.vision_max_pixels),
        () => ({ ok: false as const, reason: 'the file is no longer in the workspace' }),
      );
      if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(key, hit);
    }
    return hit;
  }

  /** The bytes of an image the user sent, read from a descriptor the confined walk opened. */
  private async readImage(rel: string): Promise<Buffer> {
    const opened = await openEntry(this.paths, rel, 'read');
    try {
      if (!opened.stat.isFile() || opened.stat.size > MAX_IMAGE_BYTES) throw new Error('not an image file');
      return await opened.handle.readFile();
    } finally {
      await opened.handle.close();
    }
  }

  /**
   * The messages with image parts added to the newest `llm.vision_history_turns` user messages
   * that name images; older ones keep their text (the path note is their placeholder).
   */
  async decorate(messages: ChatMessage[]): Promise<Decorated> {
    const keep = this.config.llm.vision_history_turns;
    const out = [...messages];
    const failed: Decorated['failed'] = [];
    let seen = 0;
    let withImages = false;
    for (let i = out.length - 1; i >= 0 && seen < keep; i--) {
      const m = out[i];
      if (m?.role !== 'user' || typeof m.content !== 'string') continue;
      seen++;
      const files = imagesOf(m.content);
      if (files.length === 0) continue;
      const parts: ContentPart[] = [];
      const notes: string[] = [];
      for (const file of files) {
        const img = await this.prepared(file);
        if (img.ok) parts.push({ type: 'image_url', image_url: { url: img.url } });
        else {
          failed.push({ file, reason: img.reason });
          notes.push(`[${file} was not shown: ${img.reason}]`);
        }
      }
      const text = notes.length ? `${m.content}\n${notes.join('\n')}` : m.content;
      if (parts.length) withImages = true;
      out[i] = { role: 'user', content: parts.length ? [{ type: 'text', text }, ...parts] : text };
    }
    return { messages: out, failed, withImages };
  }
}

/**
 * The messages with every image part replaced by its description from `describe` (the
 * `llm.vision_model`), or by a note when it gives none.
 */
export async function describedImages(
  messages: ChatMessage[],
  describe: (url: string) => Promise<string>,
): Promise<ChatMessage[]> {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.role !== 'user' || typeof m.content === 'string') {
      out.push(m);
      continue;
    }
    const pieces: string[] = [];
    for (const p of m.content) {
      if (p.type === 'text') pieces.push(p.text);
      else {
        const text = (await describe(p.image_url.url).catch(() => '')).trim();
        pieces.push(text ? `\n[An image, described: ${text}]` : '\n[An image that could not be described.]');
      }
    }
    out.push({ role: 'user', content: pieces.join('') });
  }
  return out;
}

/** The messages with every image part replaced by a note (a model that cannot see images). */
export function withoutImages(messages: ChatMessage[]): ChatMessage[] {
  return messages.map((m) => {
    if (m.role !== 'user' || typeof m.content === 'string') return m;
    const text = m.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
    return { role: 'user', content: `${text}\n[The images were not shown: this model cannot see images.]` };
  });
}
