/**
 * A real ToolContext for unit tests: kysely over a temp SQLite file migrated to the latest
 * schema, a real PathPolicy over a temp workspace, collected output and audit records.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { configSchema, type Config } from '../../src/config.js';
import { migrateToLatest } from '../../src/store/db.js';
import { workspacePolicy } from '../../src/tools/protected-paths.js';
import type { AnyTool, ToolContext, ToolResult } from '../../src/tools/types.js';
import { openTestDatabase } from '../helpers/test-db.js';

/** A test context plus what it collected. */
export interface TestContext extends ToolContext {
  workspace: string;
  tmp: string;
  outputs: string[];
  audits: { kind: string; data: Record<string, unknown> }[];
  completions: string[];
  abort: AbortController;
  /** Run a tool the way the engine does: parse, then execute. Parse errors become failed results. */
  run(tool: AnyTool, args: unknown): Promise<ToolResult>;
  close(): Promise<void>;
}

/** Build a fresh context. `config` is merged over the defaults (workspace root is set here). */
export async function makeContext(
  options: {
    config?: Record<string, unknown>;
    /** A configuration loaded as users load it (from a file); used as is, its workspace included. */
    loaded?: Config;
    conversationId?: string;
    complete?: (p: string) => string;
  } = {},
): Promise<TestContext> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-tools-'));
  const workspace = options.loaded ? options.loaded.workspace.root : path.join(tmp, 'ws');
  fs.mkdirSync(workspace, { recursive: true });
  const raw = { ...(options.config ?? {}) } as Record<string, Record<string, unknown>>;
  raw.workspace = { ...(raw.workspace ?? {}), root: workspace };
  const config: Config = options.loaded ?? configSchema.parse(raw);
  const db = openTestDatabase(tmp, 'db');
  await migrateToLatest(db);
  const conversationId = options.conversationId ?? 'conv-1';
  const now = Date.now();
  await db
    .insertInto('conversations')
    .values({
      id: conversationId,
      channel: 'console',
      chat_key: 'console',
      thread_key: '',
      owner_id: null,
      model: null,
      scratchpad: null,
      archived: 0,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const outputs: string[] = [];
  const audits: { kind: string; data: Record<string, unknown> }[] = [];
  const completions: string[] = [];
  const abort = new AbortController();
  const paths = workspacePolicy(config);
  let callN = 0;
  const ctx: TestContext = {
    workspace: paths.root,
    tmp,
    outputs,
    audits,
    completions,
    abort,
    conversationId,
    callId: 'call-1',
    requester: 'console:tester',
    requesterIsAdmin: async () => true,
    channel: 'console',
    signal: abort.signal,
    db,
    config,
    paths,
    log: pino({ level: 'silent' }),
    emitOutput: (text) => outputs.push(text),
    async audit(kind, data) {
      audits.push({ kind, data });
      await db
        .insertInto('audit')
        .values({
          conversation_id: conversationId,
          tool_call_id: ctx.callId,
          kind,
          data: JSON.stringify(data),
          created_at: Date.now(),
        })
        .execute();
    },
    async complete(prompt) {
      completions.push(prompt);
      return options.complete ? options.complete(prompt) : 'no answer';
    },
    async speak() {
      throw new Error('speech disabled in tests');
    },
    async run(tool, args) {
      ctx.callId = `call-${++callN}`;
      const parsed = tool.parse(args);
      if (!parsed.ok) return { output: `invalid arguments: ${parsed.error}`, status: 'failed' };
      return tool.execute(parsed.value, ctx);
    },
    async close() {
      await db.destroy();
      fs.rmSync(tmp, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    },
  };
  return ctx;
}

/** Write files under a root: `{ 'a/b.txt': 'text' }`. */
export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(root, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
}

/**
 * Live processes whose command line contains `token`, seen from here (a sandboxed command's own
 * `$!` is a PID of its namespace, not one of ours).
 */
export function livePidsWith(token: string): number[] {
  const found: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (
        fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0').includes(token) &&
        !/^\S+ \(.*\) [ZX]/.test(fs.readFileSync(`/proc/${e}/stat`, 'utf8'))
      )
        found.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
