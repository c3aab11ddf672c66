/**
 * Files both ways. Incoming: documents, photos and voice notes are downloaded through `getFile`
 * into `<workspace>/uploads/` (size-capped; Telegram's cloud API refuses files over 20 MB).
 * Outgoing: `sendFile` picks sendPhoto / sendDocument / sendVoice within Telegram's limits.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { safeFileName } from '../../delivery/files.js';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { type Api, GrammyError, InputFile } from 'grammy';
import { SwitchboardError } from '../../errors.js';
import type { PathPolicy } from '../../tools/path-policy.js';
import type { OutboundFile } from '../../contract/chat.js';
import { trimText } from './cards.js';
import type { TelegramAddress } from './html-sender.js';

/** Telegram's cloud Bot API download limit for `getFile`. */
export const GETFILE_LIMIT = 20 * 1024 * 1024;
/** Largest photo Telegram accepts with sendPhoto; bigger images go as documents. */
export const PHOTO_LIMIT = 10 * 1024 * 1024;
/** Largest upload through the cloud Bot API. */
export const UPLOAD_LIMIT = 50 * 1024 * 1024;
/** Caption limit in characters. */
export const CAPTION_LIMIT = 1024;

/** A refused or failed transfer; `message` is meant for the user. */
export class TelegramFileError extends SwitchboardError {}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

/** Options of {@link downloadToUploads}. */
export interface DownloadOptions {
  api: Api;
  apiRoot: string;
  token: string;
  paths: PathPolicy;
  fileId: string;
  /** Size Telegram reported in the message, if any. */
  declaredSize?: number;
  fileName: string;
  /** `telegram.max_download_bytes` (default 20 MB). */
  maxBytes: number;
}

/**
 * Download a Telegram file into `uploads/` of the workspace.
 * @returns the absolute path and the workspace-relative path handed to the turn.
 * @throws TelegramFileError `file_too_big` with a message for the user.
 */
export async function downloadToUploads(opts: DownloadOptions): Promise<{ abs: string; rel: string }> {
  const cap = Math.min(opts.maxBytes, GETFILE_LIMIT);
  const tooBig = (size: number) =>
    new TelegramFileError(
      'file_too_big',
      size > GETFILE_LIMIT
        ? `That file is ${mb(size)}; Telegram lets bots download at most 20 MB. Please send a smaller file or a link.`
        : `That file is ${mb(size)}; this bot accepts files up to ${mb(cap)}.`,
    );
  if (opts.declaredSize !== undefined && opts.declaredSize > cap) throw tooBig(opts.declaredSize);
  let filePath: string | undefined;
  try {
    const file = await opts.api.getFile(opts.fileId);
    if (file.file_size !== undefined && file.file_size > cap) throw tooBig(file.file_size);
    filePath = file.file_path;
  } catch (err) {
    if (err instanceof GrammyError && /file is too big/i.test(err.description)) throw tooBig(opts.declaredSize ?? GETFILE_LIMIT + 1);
    throw err;
  }
  if (!filePath) throw new TelegramFileError('file_unavailable', 'Telegram did not return a download path for that file.');
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  // The random part keeps two same-named files sent within one second apart.
  const unique = `${stamp}-${randomBytes(3).toString('hex')}-${safeFileName(opts.fileName)}`;
  const resolved = opts.paths.resolve(path.join('uploads', unique), 'write');
  if (!resolved.ok) throw new TelegramFileError('upload_path_refused', `Cannot store uploads: ${resolved.reason}`);
  await fs.mkdir(path.dirname(resolved.abs), { recursive: true });
  const res = await fetch(`${opts.apiRoot}/file/bot${opts.token}/${filePath}`);
  if (!res.ok || !res.body) throw new TelegramFileError('download_failed', `Download failed (HTTP ${res.status}).`);
  let seen = 0;
  const limiter = async function* (source: AsyncIterable<Uint8Array>) {
    for await (const chunk of source) {
      seen += chunk.length;
      if (seen > cap) throw tooBig(seen);
      yield chunk;
    }
  };
  try {
    await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), limiter, createWriteStream(resolved.abs));
  } catch (err) {
    await fs.rm(resolved.abs, { force: true });
    throw err;
  }
  return { abs: resolved.abs, rel: opts.paths.display(resolved.abs) };
}

/**
 * Upload a file into a chat. Photos over 10 MB go as documents; over 50 MB is refused.
 * @returns the message id.
 * @throws TelegramFileError with a clear message (the tool shows it to the model).
 */
export async function uploadFile(api: Api, target: TelegramAddress, file: OutboundFile): Promise<number> {
  let size: number;
  try {
    size = (await fs.stat(file.path)).size;
  } catch (err) {
    throw new TelegramFileError('file_missing', `Cannot read ${path.basename(file.path)}: ${(err as Error).message}`, err);
  }
  if (size > UPLOAD_LIMIT) {
    throw new TelegramFileError('file_too_big', `${path.basename(file.path)} is ${mb(size)}; Telegram bots can send at most 50 MB.`);
  }
  const caption = file.caption?.trim() ? trimText(file.caption, CAPTION_LIMIT) : undefined;
  const extra = { ...(caption ? { caption } : {}), ...(target.threadId ? { message_thread_id: target.threadId } : {}) };
  const input = new InputFile(file.path, path.basename(file.path));
  if (file.kind === 'voice') return (await api.sendVoice(target.chatId, input, extra)).message_id;
  if (file.kind === 'photo' && size <= PHOTO_LIMIT) return (await api.sendPhoto(target.chatId, input, extra)).message_id;
  return (await api.sendDocument(target.chatId, input, extra)).message_id;
}
