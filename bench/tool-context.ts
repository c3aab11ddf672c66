/**
 * A real ToolContext for the tool benchmarks: a temp SQLite database migrated to the latest
 * schema and a PathPolicy over the given workspace.
 */
import path from 'node:path';
import { pino } from 'pino';
import { configSchema } from '../src/config.js';
import { migrateToLatest, openSqlite } from '../src/store/db.js';
import { PathPolicy } from '../src/tools/path-policy.js';
import type { ToolContext } from '../src/tools/types.js';

/** Build a context over `workspace`, with its database under `tmp`. */
export async function benchContext(workspace: string, tmp: string): Promise<ToolContext & { close(): Promise<void> }> {
  const config = configSchema.parse({ workspace: { root: workspace } });
  const db = openSqlite(path.join(tmp, 'bench.db'));
  await migrateToLatest(db);
  const now = Date.now();
  await db
    .insertInto('conversations')
    .values({
      id: 'bench',
      channel: 'bench',
      chat_key: 'bench',
      thread_key: '',
      owner_id: null,
      model: null,
      scratchpad: null,
      archived: 0,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return {
    conversationId: 'bench',
    callId: 'bench-call',
    requester: 'bench:user',
    requesterIsAdmin: async () => false,
    channel: 'bench',
    signal: new AbortController().signal,
    db,
    config,
    paths: new PathPolicy({ root: workspace, denyGlobs: config.workspace.deny_globs }),
    log: pino({ level: 'silent' }),
    emitOutput: () => {},
    audit: async () => {},
    complete: async () => '',
    speak: async () => Buffer.alloc(0),
    close: () => db.destroy(),
  };
}

/** Median of a list of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}
