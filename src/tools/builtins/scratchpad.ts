/**
 * `update_scratchpad {content}`: one shared note per conversation (the `conversations.scratchpad`
 * column), replaced whole on each call and shown to the model every round through
 * {@link scratchpadSection}. Empty content clears it.
 */
import { z } from 'zod';
import { hotCache } from '../../store/hot-cache.js';
import { setScratchpad } from '../../store/repos/conversations.js';
import type { PromptSection } from '../types.js';
import { defineTool } from '../define.js';
import { fail } from './common.js';

/** Longest scratchpad. */
export const MAX_SCRATCHPAD_CHARS = 8000;

/** The `update_scratchpad` tool. */
export const updateScratchpadTool = defineTool({
  name: 'update_scratchpad',
  description:
    "Replace this conversation's scratchpad: working notes (decisions, findings, open questions) shown to you every turn. " +
    'Send the full new text; empty text clears it.',
  schema: z
    .object({ content: z.string().max(MAX_SCRATCHPAD_CHARS).describe('The complete new scratchpad text.') })
    .strict(),
  meta: { category: 'memory', defaultApproval: 'allow', primaryKey: 'content', subAgent: true, source: 'builtin' },
  describe: (a) => (a.content.trim() ? 'update_scratchpad' : 'update_scratchpad (clear)'),
  async execute(args, ctx) {
    const text = args.content.trim();
    if (!(await setScratchpad(ctx.db, ctx.conversationId, text === '' ? null : text)))
      return fail('this conversation has no record; the scratchpad was not saved');
    return text === ''
      ? { output: 'Scratchpad cleared.', summary: 'cleared' }
      : { output: `Scratchpad saved (${text.length} characters).`, summary: 'saved' };
  },
});

/** System-prompt section: the conversation's scratchpad. */
export const scratchpadSection: PromptSection = async ({ db, conversationId }) => {
  const text = (await hotCache(db).scratchpad(conversationId))?.trim();
  if (!text) return null;
  return `## Scratchpad (your notes for this conversation; update_scratchpad replaces them)\n${text}`;
};
