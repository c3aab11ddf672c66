/**
 * `math {expression}`: evaluate with mathjs in a worker thread, unsafe functions removed, within
 * `tools.math_timeout_ms`. Arithmetic, units, matrices, statistics, big numbers; several
 * expressions separated by newlines or `;` give one result per line. No file, network or process
 * access.
 */
import { z } from 'zod';
import { defineTool } from '../define.js';
import { evaluateMath } from '../math-runner.js';
import { fail } from './common.js';

const schema = z
  .object({
    expression: z
      .string()
      .min(1)
      .max(10_000)
      .describe(
        'mathjs expression(s), e.g. "sqrt(2) * 3", "5 cm to inch", "det([1,2;3,4])"; separate several with newlines.',
      ),
  })
  .strict();

/** The `math` tool. */
export const mathTool = defineTool({
  name: 'math',
  description:
    'Evaluate math exactly instead of guessing: arithmetic, units ("5 cm to inch"), matrices, statistics, ' +
    'variables and functions (mathjs syntax). Several expressions: one per line.',
  schema,
  meta: { category: 'misc', defaultApproval: 'allow', primaryKey: 'expression', subAgent: true, source: 'builtin' },
  describe: (a) => `math ${a.expression}`,
  async execute(args, ctx) {
    const r = await evaluateMath(args.expression, ctx.config.tools.math_timeout_ms);
    if (!r.ok) return fail(`math error: ${r.error}`);
    return { output: r.result, summary: r.result.split('\n').at(-1)?.slice(0, 80) };
  },
});
