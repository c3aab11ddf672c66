/**
 * `write_todos {todos:[{content, status}]}`: a private checklist the model re-sends whole on
 * every change. Stateless: nothing is stored; the formatted list is the result (and so lives in
 * the conversation log).
 */
import { z } from 'zod';
import { defineTool } from '../define.js';

const MARK = { pending: '[ ]', in_progress: '[~]', completed: '[x]' } as const;

/** The `write_todos` tool. */
export const writeTodosTool = defineTool({
  name: 'write_todos',
  description:
    'Keep a checklist for multi-step work: send the whole list each time with each item pending, in_progress or completed. ' +
    'Keep one item in_progress at a time.',
  schema: z
    .object({
      todos: z
        .array(
          z
            .object({
              content: z.string().trim().min(1).max(500),
              status: z.enum(['pending', 'in_progress', 'completed']),
            })
            .strict(),
        )
        .max(50)
        .describe('The complete list, in order.'),
    })
    .strict(),
  meta: { category: 'misc', defaultApproval: 'allow', subAgent: true, source: 'builtin' },
  describe: (a) => {
    const done = a.todos.filter((t) => t.status === 'completed').length;
    return `write_todos ${done}/${a.todos.length} done`;
  },
  async execute(args) {
    if (args.todos.length === 0) return { output: 'Todo list cleared.', summary: 'cleared' };
    const done = args.todos.filter((t) => t.status === 'completed').length;
    const lines = args.todos.map((t, i) => `${MARK[t.status]} ${i + 1}. ${t.content}`);
    return {
      output: `Todos (${done}/${args.todos.length} done):\n${lines.join('\n')}`,
      summary: `${done}/${args.todos.length} done`,
    };
  },
});
