/**
 * Files people send, saved into their conversation's folder under the workspace `uploads/`
 * (`upload-folders.ts`) the same way by every channel (created through the confined primitive, so
 * a symlink planted there cannot redirect them): a
 * safe and unique name, a size cap checked before reading (the size a platform declares) and
 * while reading (what it declared is only a claim), and no partial file left behind when the cap
 * is hit or the transfer breaks. The channel supplies only the platform's request.
 * Files the bot sends (the copies of `sent-files.ts`) are checked the same way by every channel
 * before its upload ({@link checkOutboundFile}).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { errorMessage, SwitchboardError } from '../errors.js';
import { PathRefused } from '../tools/confined/open.js';
import { createFile, type NewFile } from '../tools/confined/write.js';
import type { PathPolicy } from '../tools/path-policy.js';
import type { OutboundText } from '../contract/chat.js';
import type { OutboundUpload } from '../contract/surface.js';
import { SEND_FILE, UPLOAD } from './notices.js';

/** Longest saved name, characters (the extension included). */
const MAX_NAME = 120;

/**
 * A file name safe on every file system: no folders, no leading dots, only word characters,
 * dots and dashes; at most 120 characters with the extension kept (a long name loses the end of
 * its stem, not its `.pdf`).
 */
export function safeFileName(name: string): string {
  const base =
    path
      .basename(name.replace(/\\/g, '/'))
      .replace(/[^\w.-]+/g, '_')
      .replace(/^\.+/, '') || 'file';
  if (base.length <= MAX_NAME) return base;
  const ext = path.extname(base);
  const keep = ext.length > 0 && ext.length <= 16 ? ext : '';
  return `${base.slice(0, MAX_NAME - keep.length)}${keep}`;
}

/**
 * A file that was not taken; `message` is the reason for the sender, after the file's name.
 * Codes: `file_too_big`, `download_failed`, `upload_path_refused`.
 */
export class UploadRefused extends SwitchboardError {}

/** A saved upload: its absolute path and the workspace-relative one the turn sees. */
export interface SavedUpload {
  abs: string;
  rel: string;
}

/** Where and within what size a file is saved. */
export interface UploadTarget {
  paths: PathPolicy;
  /** The workspace-relative folder to save in: the conversation's (see `upload-folders.ts`). */
  folder: string;
  /** The name the sender gave the file; saved as {@link safeFileName} of it. */
  name: string;
  /** The channel's cap, bytes (e.g. `slack.max_download_bytes`). */
  maxBytes: number;
  /** Put before the time stamp of the saved name (the web chat's `web-<user>`). */
  prefix?: string;
}

/** The refusal of a file over the cap (`size` when known). */
function tooBig(size: number | undefined, cap: number): UploadRefused {
  return new UploadRefused('file_too_big', UPLOAD.tooBig(size, cap));
}

/**
 * Save a stream as `<folder>/<prefix->YYYYMMDDTHHMMSS-<random>-<safe name>`; the random part
 * keeps two same-named files sent within one second apart.
 * @throws UploadRefused `file_too_big` once more than `maxBytes` arrived (the partial file is
 *   removed), `upload_path_refused` when the workspace policy refuses the folder; a broken stream
 *   throws its own error, also after removing the partial file.
 */
export async function saveUpload(source: AsyncIterable<Uint8Array>, target: UploadTarget): Promise<SavedUpload> {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  const name = `${target.prefix ? `${target.prefix}-` : ''}${stamp}-${randomBytes(3).toString('hex')}-${safeFileName(target.name)}`;
  let file: NewFile;
  try {
    // Created new (never an existing file, never through a symlink) in a folder the confined
    // walk checked: a link planted in uploads/ cannot redirect the bytes.
    file = await createFile(target.paths, path.join(target.folder, name));
  } catch (err) {
    const reason = err instanceof PathRefused ? err.message : errorMessage(err);
    throw new UploadRefused('upload_path_refused', UPLOAD.cannotStore(reason), err);
  }
  let seen = 0;
  try {
    for await (const chunk of source) {
      seen += chunk.length;
      if (seen > target.maxBytes) throw tooBig(undefined, target.maxBytes);
      for (let off = 0; off < chunk.length; ) off += (await file.handle.write(chunk, off)).bytesWritten;
    }
  } catch (err) {
    await file.discard();
    throw err;
  }
  await file.close();
  return { abs: file.abs, rel: target.paths.display(file.abs) };
}

/** A platform's download of one file: its URL and what to send with the request. */
export interface DownloadRequest extends UploadTarget {
  url: string;
  /** Request headers (Slack's bearer token). */
  headers?: Record<string, string>;
  /** Size the platform declared; over the cap is refused before any request. */
  declaredSize?: number;
  /**
   * The reason to refuse an answer, checked before its body is read (Slack answers 200 with its
   * login page when a scope is missing); undefined = take it. Default: refuse anything but a 2xx.
   */
  refuse?(res: Response): string | undefined;
  /** Tests pass their own. */
  fetchFn?: typeof fetch;
}

/**
 * Download a file over HTTP into the target's folder within the cap ({@link saveUpload}).
 * @throws UploadRefused with the reason for the sender; never another error.
 */
export async function downloadUpload(req: DownloadRequest): Promise<SavedUpload> {
  if (req.declaredSize !== undefined && req.declaredSize > req.maxBytes) throw tooBig(req.declaredSize, req.maxBytes);
  try {
    const res = await (req.fetchFn ?? fetch)(req.url, { headers: req.headers });
    const why = req.refuse ? req.refuse(res) : res.ok ? undefined : UPLOAD.http(res.status);
    if (why || !res.body) {
      await res.body?.cancel();
      throw new UploadRefused('download_failed', why ?? UPLOAD.http(res.status));
    }
    return await saveUpload(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), req);
  } catch (err) {
    if (err instanceof UploadRefused) throw err;
    throw new UploadRefused('download_failed', UPLOAD.failed(errorMessage(err)), err);
  }
}

/** A file the bot is about to send, as checked: the name the platform shows, and its size. */
export interface CheckedFile {
  name: string;
  /** Bytes. */
  size: number;
}

/** The largest file a channel sends: its bytes, and whose limit it is (a config key, the platform's). */
export interface SendLimit {
  bytes: number;
  /** Said in the refusal: `slack.max_upload_bytes`, `Telegram's Bot API`. */
  name: string;
}

/**
 * Check a file before a channel uploads it: with a `limit`, it must be no larger. The file is the
 * copy taken when it was sent (missing or special files were refused then); nothing is sent when
 * it is refused, and the words are the same on every channel (the tool shows them to the model).
 * @throws SwitchboardError `file_too_big`, its message for the person.
 */
export function checkOutboundFile(file: CheckedFile, limit?: SendLimit): CheckedFile {
  if (limit && file.size > limit.bytes)
    throw new SwitchboardError('file_too_big', SEND_FILE.tooBig(file.name, file.size, limit.bytes, limit.name));
  return { name: file.name, size: file.size };
}

/** A file ready to upload: the name the chat shows, its bytes, its caption. */
export interface UploadBytes {
  name: string;
  bytes: Buffer;
  caption?: string;
}

/**
 * What a channel uploads for a sent file (the copy taken when it was sent) or for a text made into
 * a file (an approval's whole arguments): checked by {@link checkOutboundFile} first, so a refused
 * file is never read, then read whole.
 * @throws SwitchboardError `file_too_big` over `limit` (nothing is sent).
 */
export async function uploadBytes(file: OutboundUpload | OutboundText, limit?: SendLimit): Promise<UploadBytes> {
  const text = 'text' in file ? Buffer.from(file.text, 'utf8') : undefined;
  const { name } = checkOutboundFile(
    { name: file.name, size: text ? text.length : (file as OutboundUpload).size },
    limit,
  );
  return { name, bytes: text ?? (await (file as OutboundUpload).bytes()), caption: file.caption };
}
