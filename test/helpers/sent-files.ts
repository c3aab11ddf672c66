/**
 * Sent files in tests: the copy a tool's `sendFile` takes (`delivery/sent-files.ts`), as a surface
 * uploads it, and a stand-in of a given size for the surfaces' own size limits.
 */
import type { OutboundUpload } from '../../src/contract/surface.js';
import { snapshotWorkspaceFile, uploadOf } from '../../src/delivery/sent-files.js';
import type { Db } from '../../src/store/db.js';
import type { PathPolicy } from '../../src/tools/path-policy.js';

/** Take the copy of a workspace file as `send_attachment` does, and return what a surface uploads. */
export async function sentCopy(
  core: { db: Db; paths: PathPolicy },
  rel: string,
  kind: OutboundUpload['kind'] = 'file',
): Promise<OutboundUpload> {
  const copy = await snapshotWorkspaceFile(core.db, core.paths, rel);
  return uploadOf(core.db, { snapshot: copy.id, kind });
}

/** A copy of `size` zero bytes that is never stored (for a surface's size check alone). */
export function sizedUpload(name: string, size: number, kind: OutboundUpload['kind'] = 'file'): OutboundUpload {
  return {
    name,
    size,
    kind,
    snapshot: 'not-stored',
    bytes: async () => Buffer.alloc(size),
    chunks: async function* () {
      yield Buffer.alloc(size);
    },
  };
}

/** The error a promise rejects with (undefined when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<Error | undefined> {
  return p.then(
    () => undefined,
    (e: unknown) => e as Error,
  );
}
