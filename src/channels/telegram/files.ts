/**
 * Files people send: documents, photos and voice notes are downloaded through `getFile` into
 * `<workspace>/uploads/` by the shared download (size-capped; Telegram's cloud API refuses files
 * over 20 MB). Files the bot sends go through the surface's `upload`.
 */
import { type Api, GrammyError } from 'grammy';
import { downloadUpload, UploadRefused, UPLOAD } from '../../kit/index.js';
import type { SavedUpload, PathPolicy } from '../../kit/index.js';

/** Telegram's cloud Bot API download limit for `getFile`. */
export const GETFILE_LIMIT = 20 * 1024 * 1024;

/** Options of {@link downloadToUploads}. */
export interface DownloadOptions {
  api: Api;
  apiRoot: string;
  token: string;
  paths: PathPolicy;
  /** The workspace-relative folder to save in (the conversation's, chosen by the core). */
  folder: string;
  fileId: string;
  /** Size Telegram reported in the message, if any. */
  declaredSize?: number;
  fileName: string;
  /** `telegram.max_download_bytes` (default 20 MB). */
  maxBytes: number;
}

/**
 * Download a Telegram file into its conversation's upload folder (see `delivery/files.ts`), within
 * both the bot's cap and the 20 MB Telegram lets a bot download.
 * @throws UploadRefused with the reason for the sender.
 */
export async function downloadToUploads(opts: DownloadOptions): Promise<SavedUpload> {
  const cap = Math.min(opts.maxBytes, GETFILE_LIMIT);
  const tooBig = (size: number | undefined) =>
    new UploadRefused(
      'file_too_big',
      size === undefined || size > GETFILE_LIMIT
        ? UPLOAD.overPlatform('Telegram', size, GETFILE_LIMIT)
        : UPLOAD.tooBig(size, cap),
    );
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
  return downloadUpload({
    url: `${opts.apiRoot}/file/bot${opts.token}/${filePath}`,
    paths: opts.paths,
    folder: opts.folder,
    name: opts.fileName,
    maxBytes: cap,
  });
}
