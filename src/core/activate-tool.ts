/**
 * `activate_tools`: lazy MCP servers stay out of the model's tool list (to save context) until the
 * model asks for their group. The grant is a row per conversation, so it survives restarts; the
 * tools are offered from the next model round on.
 */
import { z } from 'zod';
import { grantGroups, grantedGroups } from '../store/repos/grants.js';
import { defineTool } from '../tools/define.js';
import type { PromptSection } from '../tools/types.js';
import type { ToolRegistry } from './tool-registry.js';

/** Name of the activation tool. */
export const ACTIVATE_TOOL = 'activate_tools';

/** The tool, bound to the registry whose lazy groups it can grant. */
export function activateTool(registry: ToolRegistry) {
  return defineTool({
    name: ACTIVATE_TOOL,
    description:
      'Make a group of extra tools available in this conversation (the groups are listed in the system prompt). The tools can be used from your next step on.',
    schema: z.object({ groups: z.array(z.string().min(1)).min(1).max(20).describe('Group names to activate') }),
    meta: { category: 'misc', defaultApproval: 'allow', primaryKey: 'groups', source: 'core', subAgent: true },
    describe: (a) => `activate_tools ${a.groups.join(', ')}`,
    async execute(args, ctx) {
      const known = new Map(registry.lazyGroups().map((g) => [g.name, g]));
      const unknown = args.groups.filter((g) => !known.has(g));
      if (unknown.length) {
        const names = [...known.keys()].join(', ') || '(none)';
        return { output: `Unknown tool group(s): ${unknown.join(', ')}. Available groups: ${names}.`, status: 'failed' };
      }
      await grantGroups(ctx.db, ctx.conversationId, args.groups, ctx.requester);
      const lines = args.groups.map((g) => {
        const tools = registry.all().filter((t) => t.meta.lazyGroup === g).map((t) => t.name);
        return `${g}: ${tools.length ? tools.join(', ') : 'no tools available right now (the server may be reconnecting)'}`;
      });
      return { output: `Activated. Available from your next step:\n${lines.join('\n')}`, summary: `activated ${args.groups.join(', ')}` };
    },
  });
}

/** System-prompt section listing the lazy groups not yet activated in the conversation. */
export function lazyGroupsSection(registry: ToolRegistry): PromptSection {
  return async ({ db, conversationId }) => {
    const groups = registry.lazyGroups();
    if (groups.length === 0) return null;
    const granted = await grantedGroups(db, conversationId);
    const waiting = groups.filter((g) => !granted.has(g.name));
    if (waiting.length === 0) return null;
    return `More tools can be activated with ${ACTIVATE_TOOL} {"groups":[...]}:\n${waiting.map((g) => `- ${g.name}: ${g.description}`).join('\n')}`;
  };
}
