/**
 * `bash_processes {action: list|output|stop, id?}`: the background commands this conversation
 * started with `bash {background: true}` — list them, read their captured output (head and tail,
 * secrets redacted), or stop one (its whole process group).
 */
import { z } from 'zod';
import { type BackgroundProcess, getBackground, listBackground, stopBackground } from '../background.js';
import { defineTool } from '../define.js';
import { configSecrets, redactSecrets } from '../redact.js';
import { fail } from './common.js';

const schema = z
  .object({
    action: z
      .enum(['list', 'output', 'stop'])
      .describe('list: all background processes; output: what one printed; stop: kill one.'),
    id: z.string().min(1).optional().describe('Process id from bash (e.g. "bg1"); needed for output and stop.'),
  })
  .strict();

function state(p: BackgroundProcess): string {
  if (!p.exit) return `running ${Math.round((Date.now() - p.startedAt) / 1000)} s`;
  if (p.exit.stopped) return 'stopped';
  return p.exit.signal ? `killed by ${p.exit.signal}` : `exited ${p.exit.code}`;
}

/** The `bash_processes` tool. */
export const bashProcessesTool = defineTool({
  name: 'bash_processes',
  description: 'List, read the output of, or stop background commands started with bash {background: true}.',
  schema,
  meta: { category: 'exec', defaultApproval: 'allow', primaryKey: 'action', subAgent: true, source: 'builtin' },
  describe: (a) => `bash_processes ${a.action}${a.id ? ` ${a.id}` : ''}`,
  async execute(args, ctx) {
    if (args.action === 'list') {
      const all = listBackground(ctx.conversationId);
      if (all.length === 0) return { output: 'No background processes.', summary: 'none' };
      const lines = all.map(
        (p) => `${p.id}  pid ${p.pid}  ${state(p)}  ${ctx.paths.display(p.workdir)}  $ ${p.command}`,
      );
      return { output: lines.join('\n'), summary: `${all.filter((p) => !p.exit).length} running` };
    }
    if (!args.id) return fail(`action "${args.action}" needs an id (see action "list")`);
    const p = getBackground(ctx.conversationId, args.id);
    if (!p) return fail(`no background process ${args.id} in this conversation (see action "list")`);
    if (args.action === 'stop') {
      if (p.exit) return { output: `${p.id} already ended (${state(p)})`, summary: `${p.id} ${state(p)}` };
      await stopBackground(p);
      return { output: `Stopped ${p.id} (pid ${p.pid}) and its process group.`, summary: `stopped ${p.id}` };
    }
    const text = redactSecrets(p.run.output.text(), configSecrets(ctx.config)).replace(/\n$/, '');
    return {
      output: `${p.id} (${state(p)}) $ ${p.command}\n${text || '(no output yet)'}`,
      summary: `${p.id} ${state(p)}`,
    };
  },
});
