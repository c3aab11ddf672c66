/**
 * `activate_tools`: deferred built-in groups and lazy MCP servers stay out of the model's tool list
 * (to save context) until the model asks for their group. The grant is a row per conversation, so
 * it survives restarts; the tools are offered from the model's next round on, in the same turn.
 */
import { z } from 'zod';
import { grantGroups } from '../store/repos/grants.js';
import { defineTool } from '../tools/define.js';
import type { ToolRegistry } from './tool-registry.js';

import { ACTIVATE_TOOL } from './deferred-tools.js';

export { ACTIVATE_TOOL };

/** The tool, bound to the registry whose lazy groups it can grant. */
export function activateTool(registry: ToolRegistry) {
  return defineTool({
    name: ACTIVATE_TOOL,
    description: 'Switch on tool groups named in the system prompt for this chat.',
    schema: z.object({ groups: z.array(z.string().min(1)).min(1).max(20) }),
    meta: { category: 'misc', defaultApproval: 'allow', primaryKey: 'groups', source: 'core', subAgent: true },
    describe: (a) => `activate_tools ${a.groups.join(', ')}`,
    async execute(args, ctx) {
      const known = new Set(registry.lazyGroups().map((g) => g.name));
      // A tool's name stands for its group (models often name the tool they want).
      const asked = args.groups.map((g) => {
        if (known.has(g)) return g;
        const tool = registry.get(g);
        return (tool && registry.groupOf(tool)) ?? g;
      });
      const unknown = asked.filter((g) => !known.has(g));
      if (unknown.length) {
        const names = [...known].join(', ') || '(none)';
        return {
          output: `Unknown tool group(s): ${unknown.join(', ')}. Available groups: ${names}.`,
          status: 'failed',
        };
      }
      const groups = [...new Set(asked)];
      await grantGroups(ctx.db, ctx.conversationId, groups, ctx.requester);
      const lines = groups.map((g) => {
        const tools = registry
          .all()
          .filter((t) => registry.groupOf(t) === g)
          .map((t) => t.name);
        return `${g}: ${tools.length ? tools.join(', ') : 'no tools available right now (the server may be reconnecting)'}`;
      });
      return {
        output: `Activated. Available from your next step:\n${lines.join('\n')}`,
        summary: `activated ${groups.join(', ')}`,
      };
    },
  });
}
