/**
 * The record of which files a conversation has read. `edit_file` (and `write_patch` edits) need a
 * prior read, and refuse when the file changed on disk since then, so the model never edits text
 * it has not seen. The record itself lives in the store (`src/store/repos/file-reads.ts`).
 */
import type { FileReadsTable } from '../store/schema.js';

/**
 * Why an edit of `abs` must be refused given the last read, or null when it may go ahead.
 * The hash decides when one was recorded; otherwise size and mtime do.
 */
export function staleReason(
  display: string,
  read: FileReadsTable | undefined,
  current: { size: number; mtimeMs: number; sha256: string },
): string | null {
  if (!read) return `${display}: read it with read_file first; edits need a prior read in this conversation`;
  const changed =
    read.sha256 !== null
      ? read.sha256 !== current.sha256
      : Number(read.size) !== current.size || Number(read.mtime_ms) !== Math.floor(current.mtimeMs);
  return changed ? `${display}: changed on disk since you last read it; read_file it again before editing` : null;
}
