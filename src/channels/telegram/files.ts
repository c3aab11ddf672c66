/**
 * Files both ways. Incoming: documents, photos and voice notes are downloaded through `getFile`
 * into `<workspace>/uploads/` by the shared download (size-capped; Telegram's cloud API refuses
 * files over 20 MB).
 * Outgoing: `sendFile` picks sendPhoto / sendDocument / sendVoice within Telegram's limits.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { type Api, GrammyError, InputFile } from 'grammy';
import { downloadUpload, type SavedUpload, UploadRefused } from '../../delivery/files.js';
import { UPLOAD } from '../../delivery/notices.js';
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
 * Download a Telegram file into `uploads/` of the workspace (see `delivery/files.ts`), within
 * both the bot's cap and the 20 MB Telegram lets a bot download.
 * @throws UploadRefused with the reason for the sender.
 */
export async function downloadToUploads(opts: DownloadOptions): Promise<SavedUpload> {
  const cap = Math.min(opts.maxBytes, GETFILE_LIMIT);
  const tooBig = (size: number | undefined) =>
    new UploadRefused('file_too_big', size === undefined || size > GETFILE_LIMIT ? UPLOAD.overPlatform('Telegram', size, GETFILE_LIMIT) : UPLOAD.tooBig(size, cap));
  if (opts.declaredSize !== undefined && opts.declaredSize > cap) throw tooBig(opts.declaredSize);
  let filePath: string | undefined;
  try {
    const file = await opts.api.getFile(opts.fileId);
    if (file.file_size !== undefined && file.file_size > cap) throw tooBig(file.file_size);
    filePath = file.file_path;
  } catch (err) {
    if (err instanceof GrammyError && /file is too big/i.test(err.description)) throw tooBig(opts.declaredSize);
    throw err;
  }
  if (!filePath) throw new UploadRefused('download_failed', UPLOAD.noLink('Telegram'));
  return downloadUpload({ url: `${opts.apiRoot}/file/bot${opts.token}/${filePath}`, paths: opts.paths, name: opts.fileName, maxBytes: cap });
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
