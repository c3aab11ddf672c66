/**
 * `remember {key, value}`, `recall {query?, limit?}`, `forget {key}`: memories saved in the store
 * (global to this switchboard, shown in every conversation's system prompt), searched with FTS5
 * together with this chat's own history.
 */
import { z } from 'zod';
import { defineTool } from '../define.js';
import { deleteMemory, listMemories, saveMemory, searchHistory, searchMemories, textQuery } from '../memory-store.js';
import type { ToolResult } from '../types.js';
import { fail } from './common.js';

/** Longest memory value. */
export const MAX_MEMORY_CHARS = 4000;
/** Most memories stored. */
export const MAX_MEMORIES = 500;

const key = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[^\n\r]+$/, 'one line');

/** The `remember` tool. */
export const rememberTool = defineTool({
  name: 'remember',
  description: 'Save a fact for later chats (shown in your instructions); same key replaces. Never secrets.',
  schema: z.object({ key, value: z.string().trim().min(1).max(MAX_MEMORY_CHARS) }).strict(),
  meta: { category: 'memory', defaultApproval: 'allow', primaryKey: 'key', source: 'builtin' },
  describe: (a) => `remember ${a.key}`,
  async execute(args, ctx): Promise<ToolResult> {
    const outcome = await saveMemory(ctx.db, args.key, args.value, ctx.requester, MAX_MEMORIES);
    if (outcome === 'full') return fail(`memory is full (${MAX_MEMORIES} entries); forget something first`);
    const replaced = outcome === 'replaced';
    return {
      output: `${replaced ? 'Updated' : 'Saved'} memory "${args.key}".`,
      summary: `${replaced ? 'updated' : 'saved'} ${args.key}`,
    };
  },
});

/** The `forget` tool. */
export const forgetTool = defineTool({
  name: 'forget',
  description: 'Delete a saved memory by its key.',
  schema: z.object({ key }).strict(),
  meta: { category: 'memory', defaultApproval: 'allow', primaryKey: 'key', source: 'builtin' },
  describe: (a) => `forget ${a.key}`,
  async execute(args, ctx): Promise<ToolResult> {
    const gone = await deleteMemory(ctx.db, args.key);
    if (!gone) return fail(`no memory with key "${args.key}" (recall without a query lists them)`);
    return { output: `Forgot "${args.key}".`, summary: `forgot ${args.key}` };
  },
});

/** The `recall` tool. */
export const recallTool = defineTool({
  name: 'recall',
  description: "Full-text search of saved memories and this chat's earlier messages; no query lists memories.",
  schema: z
    .object({
      query: z.string().trim().min(1).max(500).optional(),
      limit: z.number().int().min(1).max(50).optional(),
    })
    .strict(),
  meta: { category: 'memory', defaultApproval: 'allow', primaryKey: 'query', subAgent: true, source: 'builtin' },
  describe: (a) => (a.query ? `recall ${a.query}` : 'recall (all memories)'),
  async execute(args, ctx): Promise<ToolResult> {
    const limit = args.limit ?? 20;
    if (!args.query) {
      const all = await listMemories(ctx.db, 200);
      if (all.length === 0) return { output: 'No saved memories.', summary: 'no memories' };
      return {
        output: `Saved memories (${all.length}):\n${all.map((m) => `- ${m.key}: ${m.value}`).join('\n')}`,
        summary: `${all.length} memories`,
      };
    }
    for (const mode of ['all', 'any'] as const) {
      const q = textQuery(args.query, mode);
      if (!q) return fail('the query has no words to search for (letters or digits)');
      const [mems, hist] = await Promise.all([
        searchMemories(ctx.db, q, limit),
        searchHistory(ctx.db, ctx.conversationId, q, limit),
      ]);
      if (mems.length === 0 && hist.length === 0) continue;
      const parts: string[] = [];
      if (mode === 'any') parts.push('(no result has every word; showing results with any of them)');
      if (mems.length) parts.push(`Memories:\n${mems.map((m) => `- ${m.key}: ${m.value}`).join('\n')}`);
      if (hist.length) {
        parts.push(
          `Earlier messages in this chat:\n${hist
            .map(
              (h) =>
                `- [${new Date(Number(h.created_at)).toISOString().slice(0, 16).replace('T', ' ')} ${h.role}] ${h.snippet.replace(/\s+/g, ' ')}`,
            )
            .join('\n')}`,
        );
      }
      return { output: parts.join('\n\n'), summary: `${mems.length} memories, ${hist.length} messages` };
    }
    return { output: `Nothing found for ${JSON.stringify(args.query)}.`, summary: 'nothing found' };
  },
});
