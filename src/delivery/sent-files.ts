/**
 * A file that is sent is a snapshot. When a tool sends a file, its bytes are copied — from the
 * descriptor the confined walk opened, or from memory — into the database (`sent_files`), and
 * the delivery row names that copy. Every channel uploads, and the web chat serves, only the
 * copy: a change to the workspace after sending (the file replaced by a symlink to the
 * configuration) changes nothing already sent. Copies are in the database so that any instance
 * can deliver them and they outlive a restart like the delivery rows do; the maintenance sweep
 * removes the ones nothing holds any more.
 */
import { randomUUID } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { AttachmentContent } from '../contract/content.js';
import type { OutboundUpload } from '../contract/surface.js';
import { SwitchboardError } from '../errors.js';
import type { Db } from '../store/db.js';
import {
  addSentChunk,
  deleteSentFiles,
  finishSentFile,
  SENT_CHUNK_BYTES,
  sentChunk,
  sentFile,
  startSentFile,
} from '../store/repos/sent-files.js';
import { openEntry } from '../tools/confined/open.js';
import { errnoWords } from '../tools/confined/proc-fd.js';
import type { PathPolicy } from '../tools/path-policy.js';
import { SEND_FILE } from './notices.js';

/** Largest file sent: 50 MB (Telegram's upload cap; `send_attachment` allows no more). */
export const SENT_FILE_MAX_BYTES = 50 * 1024 * 1024;

/** Copies nothing holds are kept this long after they were taken (a delivery is queued within it). */
export const SENT_FILE_GRACE_MS = 10 * 60_000;

/** A copy taken: its id (the delivery names it), the name it is shown with, its size. */
export interface SentCopy {
  id: string;
  name: string;
  size: number;
}

/** A copy of a workspace file, and where that file was (its real path). */
export interface WorkspaceCopy extends SentCopy {
  abs: string;
}

function tooBig(name: string, size: number): SwitchboardError {
  return new SwitchboardError(
    'file_too_big',
    SEND_FILE.tooBig(name, size, SENT_FILE_MAX_BYTES, 'the largest file switchboard sends'),
  );
}

/** Copy chunks into a new stored copy; a failure removes what was stored. */
async function store(db: Db, name: string, chunks: AsyncIterable<Buffer>): Promise<SentCopy> {
  const id = randomUUID();
  await startSentFile(db, id, name);
  let size = 0;
  try {
    let seq = 0;
    for await (const chunk of chunks) {
      size += chunk.length;
      if (size > SENT_FILE_MAX_BYTES) throw tooBig(name, size);
      await addSentChunk(db, id, seq++, chunk);
    }
    await finishSentFile(db, id, size);
  } catch (err) {
    await deleteSentFiles(db, [id]).catch(() => undefined);
    throw err;
  }
  return { id, name, size };
}

/** The content of an open file from its start, chunk by chunk (a file growing meanwhile is cut at the cap). */
async function* chunksOf(handle: FileHandle): AsyncGenerator<Buffer> {
  for (let pos = 0; ; ) {
    const buf = Buffer.allocUnsafe(SENT_CHUNK_BYTES);
    const { bytesRead } = await handle.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) return;
    pos += bytesRead;
    yield buf.subarray(0, bytesRead);
  }
}

/**
 * Take the copy of a workspace file: opened through the confined primitive (so it is the file the
 * policy allows, wherever symlinks point meanwhile) and read from that descriptor.
 * @throws PathRefused when the policy refuses the path; SwitchboardError `file_missing`,
 *   `file_invalid` or `file_too_big` with words for the person.
 */
export async function snapshotWorkspaceFile(db: Db, paths: PathPolicy, input: string): Promise<WorkspaceCopy> {
  const opened = await openEntry(paths, input, 'read').catch((err: NodeJS.ErrnoException) => {
    if (err instanceof SwitchboardError) throw err;
    throw new SwitchboardError('file_missing', SEND_FILE.unreadable(path.basename(input), errnoWords(err)), err);
  });
  try {
    const name = path.basename(opened.abs);
    if (!opened.stat.isFile()) throw new SwitchboardError('file_invalid', SEND_FILE.notAFile(name));
    if (opened.stat.size > SENT_FILE_MAX_BYTES) throw tooBig(name, opened.stat.size);
    return { ...(await store(db, name, chunksOf(opened.handle))), abs: opened.abs };
  } finally {
    await opened.handle.close();
  }
}

/** Take the copy of bytes a tool made (a voice note): they are not in the workspace at all. */
export async function snapshotBytes(db: Db, name: string, bytes: Buffer): Promise<SentCopy> {
  if (bytes.length > SENT_FILE_MAX_BYTES) throw tooBig(name, bytes.length);
  return store(
    db,
    name,
    (async function* () {
      for (let off = 0; off < bytes.length; off += SENT_CHUNK_BYTES) yield bytes.subarray(off, off + SENT_CHUNK_BYTES);
    })(),
  );
}

/** The content of a stored copy, chunk by chunk, read from the database as it goes. */
export async function* sentChunks(db: Db, id: string): AsyncGenerator<Buffer> {
  for (let seq = 0; ; seq++) {
    const chunk = await sentChunk(db, id, seq);
    if (!chunk) return;
    yield chunk;
  }
}

/**
 * What a surface uploads for an attachment delivery: the stored copy, with its name and size.
 * @throws SwitchboardError `file_missing` when the copy is gone (refused for good).
 */
export async function uploadOf(
  db: Db,
  file: { snapshot: string; caption?: string | null; kind: OutboundUpload['kind'] },
): Promise<OutboundUpload> {
  const row = await sentFile(db, file.snapshot);
  if (!row) {
    throw new SwitchboardError(
      'file_missing',
      SEND_FILE.unreadable('the file', 'the copy taken when it was sent is gone'),
    );
  }
  const size = Number(row.size);
  return {
    name: row.name,
    size,
    kind: file.kind,
    ...(file.caption ? { caption: file.caption } : {}),
    snapshot: row.id,
    chunks: () => sentChunks(db, row.id),
    async bytes() {
      const parts: Buffer[] = [];
      for await (const c of sentChunks(db, row.id)) parts.push(c);
      return Buffer.concat(parts, size);
    },
  };
}

/**
 * The upload of an attachment delivery: its copy, or for a row queued before copies were kept, a
 * copy taken now through `legacy` (the confined primitive), so no path is sent as it stands.
 * @throws SwitchboardError (refused for good) when there is no copy and none can be taken.
 */
export async function attachmentUpload(
  db: Db,
  content: AttachmentContent,
  legacy?: (path: string) => Promise<string>,
): Promise<OutboundUpload> {
  let snapshot = content.snapshot;
  if (!snapshot) {
    if (!legacy)
      throw new SwitchboardError(
        'file_missing',
        SEND_FILE.unreadable(path.basename(content.path), 'no copy of it was kept'),
      );
    snapshot = await legacy(content.path);
  }
  return uploadOf(db, { snapshot, caption: content.caption, kind: content.kind });
}
