/**
 * `remember {key, value, shared?}`, `recall {query?, limit?}`, `forget {key, shared?}`: memories
 * saved in the store. Each person's memory is their own (the turn's requester; a job's run: the
 * job's owner): shown in their prompts only, recalled and changed by their turns only. The shared
 * memory is shown to everyone, labelled as shared, and written by admins only (`shared: true`).
 * `recall` searches the person's and the shared memories with FTS5, together with this chat's own
 * history.
 */
import { z } from 'zod';
import { defineTool } from '../define.js';
import {
  deleteMemory,
  listMemories,
  type Memory,
  SHARED_MEMORY,
  saveMemory,
  searchHistory,
  searchMemories,
  textQuery,
} from '../memory-store.js';
import type { ToolContext, ToolResult } from '../types.js';
import { fail } from './common.js';

/** Longest memory value. */
export const MAX_MEMORY_CHARS = 4000;
/** Most memories stored per person, and in the shared memory. */
export const MAX_MEMORIES = 500;

const key = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[^\n\r]+$/, 'one line');

const shared = z
  .boolean()
  .optional()
  .describe('The shared memory everyone sees (admins only); default: this person’s own memory.');

/** Whose memory a call changes: the requester's, or (admins only) the shared one; a string is a refusal. */
async function ownerFor(ctx: ToolContext, wantsShared: boolean | undefined): Promise<string | ToolResult> {
  if (!wantsShared) return ctx.requester;
  if (await ctx.requesterIsAdmin()) return SHARED_MEMORY;
  return fail('only an admin may change the shared memory; leave out "shared" to use this person’s own memory');
}

/** A memory as a list line; shared ones say so. */
const line = (m: Memory) => `- ${m.key}: ${m.value}${m.owner === SHARED_MEMORY ? ' (shared)' : ''}`;

/** The `remember` tool. */
export const rememberTool = defineTool({
  name: 'remember',
  description:
    'Save a fact about this person for later chats (shown in your instructions); same key replaces. Never secrets.',
  schema: z.object({ key, value: z.string().trim().min(1).max(MAX_MEMORY_CHARS), shared }).strict(),
  meta: { category: 'memory', defaultApproval: 'allow', primaryKey: 'key', source: 'builtin' },
  describe: (a) => `remember ${a.key}${a.shared ? ' (shared)' : ''}`,
  async execute(args, ctx): Promise<ToolResult> {
    const owner = await ownerFor(ctx, args.shared);
    if (typeof owner !== 'string') return owner;
    const outcome = await saveMemory(ctx.db, owner, args.key, args.value, ctx.requester, MAX_MEMORIES);
    const which = owner === SHARED_MEMORY ? 'shared memory' : 'memory';
    if (outcome === 'full') return fail(`${which} is full (${MAX_MEMORIES} entries); forget something first`);
    const replaced = outcome === 'replaced';
    return {
      output: `${replaced ? 'Updated' : 'Saved'} ${which} "${args.key}".`,
      summary: `${replaced ? 'updated' : 'saved'} ${args.key}`,
    };
  },
});

/** The `forget` tool. */
export const forgetTool = defineTool({
  name: 'forget',
  description: 'Delete a saved memory of this person by its key.',
  schema: z.object({ key, shared }).strict(),
  meta: { category: 'memory', defaultApproval: 'allow', primaryKey: 'key', source: 'builtin' },
  describe: (a) => `forget ${a.key}${a.shared ? ' (shared)' : ''}`,
  async execute(args, ctx): Promise<ToolResult> {
    const owner = await ownerFor(ctx, args.shared);
    if (typeof owner !== 'string') return owner;
    const gone = await deleteMemory(ctx.db, owner, args.key);
    if (!gone) {
      const where = owner === SHARED_MEMORY ? 'in the shared memory' : 'of this person';
      return fail(`no memory with key "${args.key}" ${where} (recall without a query lists them)`);
    }
    return { output: `Forgot "${args.key}".`, summary: `forgot ${args.key}` };
  },
});

/** The `recall` tool. */
export const recallTool = defineTool({
  name: 'recall',
  description:
    "Full-text search of this person's and the shared saved memories and this chat's earlier messages; no query lists memories.",
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
    const owners = [ctx.requester, SHARED_MEMORY];
    if (!args.query) {
      const [own, common] = await Promise.all([
        listMemories(ctx.db, ctx.requester, 200),
        listMemories(ctx.db, SHARED_MEMORY, 200),
      ]);
      const all = [...own, ...common];
      if (all.length === 0) return { output: 'No saved memories.', summary: 'no memories' };
      return {
        output: `Saved memories (${all.length}):\n${all.map(line).join('\n')}`,
        summary: `${all.length} memories`,
      };
    }
    for (const mode of ['all', 'any'] as const) {
      const q = textQuery(args.query, mode);
      if (!q) return fail('the query has no words to search for (letters or digits)');
      const [mems, hist] = await Promise.all([
        searchMemories(ctx.db, q, limit, owners),
        searchHistory(ctx.db, ctx.conversationId, q, limit),
      ]);
      if (mems.length === 0 && hist.length === 0) continue;
      const parts: string[] = [];
      if (mode === 'any') parts.push('(no result has every word; showing results with any of them)');
      if (mems.length) parts.push(`Memories:\n${mems.map(line).join('\n')}`);
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
