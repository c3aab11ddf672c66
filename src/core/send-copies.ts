/**
 * What a tool's `sendFile` does: take the copy of the file first (`delivery/sent-files.ts`) —
 * a workspace file through the confined primitive, bytes as they are — and hand the channel a
 * file that names the copy. Every platform chat then sends the copy, whatever happens to the
 * workspace afterwards.
 */
import type { OutboundFile } from '../contract/chat.js';
import { snapshotBytes, snapshotWorkspaceFile } from '../delivery/sent-files.js';
import type { Db } from '../store/db.js';
import type { PathPolicy } from '../tools/path-policy.js';
import type { FileToSend } from '../tools/types.js';

/** A tool's `sendFile` over a channel's way of sending (`deliver`). */
export function sendingCopies(
  db: Db,
  paths: PathPolicy,
  deliver: (file: OutboundFile) => Promise<void>,
): (file: FileToSend) => Promise<void> {
  return async (file) => {
    const copy =
      file.bytes !== undefined
        ? { ...(await snapshotBytes(db, file.name, file.bytes)), abs: file.name }
        : await snapshotWorkspaceFile(db, paths, file.path);
    await deliver({
      path: copy.abs,
      kind: file.kind,
      ...(file.caption ? { caption: file.caption } : {}),
      snapshot: copy.id,
    });
  };
}
