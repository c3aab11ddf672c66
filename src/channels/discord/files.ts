/**
 * Files people send: a message's attachments, downloaded from Discord's CDN by the shared
 * download (`delivery/files.ts`, size-capped) into the folder the core chooses, only once the
 * core let the sender in.
 */
import { downloadUpload, type IncomingFile, type PathPolicy, UPLOAD, UploadRefused } from '../../kit/index.js';
import type { APIAttachment } from '@discordjs/core';

/** An attachment as an {@link IncomingFile}, within `maxBytes` (`discord.max_download_bytes`). */
export function incomingFile(a: APIAttachment, paths: PathPolicy, maxBytes: number): IncomingFile {
  return {
    name: a.filename,
    async fetch(folder) {
      if (a.size > maxBytes) throw new UploadRefused('file_too_big', UPLOAD.tooBig(a.size, maxBytes));
      return downloadUpload({ url: a.url, paths, folder, name: a.filename, maxBytes });
    },
  };
}
