/**
 * Per-file locks for the write tools. The engine may run several tool calls of one round in
 * parallel (`tools.parallel`); two edits of the same file would otherwise both read the old
 * content and the second write would silently drop the first edit.
 */

const tails = new Map<string, Promise<void>>();

/**
 * Run `fn` while holding the locks of every path in `paths` (canonical absolute paths).
 * Locks are taken in sorted order, so two batches over overlapping files cannot deadlock.
 */
export async function withPathLocks<T>(paths: string[], fn: () => Promise<T>): Promise<T> {
  const sorted = [...new Set(paths)].sort();
  const releases: Array<() => void> = [];
  try {
    for (const p of sorted) {
      const prev = tails.get(p) ?? Promise.resolve();
      let release!: () => void;
      const mine = new Promise<void>((r) => {
        release = r;
      });
      const tail = prev.then(() => mine);
      tails.set(p, tail);
      releases.push(() => {
        release();
        if (tails.get(p) === tail) tails.delete(p);
      });
      await prev;
    }
    return await fn();
  } finally {
    for (const r of releases.reverse()) r();
  }
}
