/** Small tools for engine tests: one that runs freely, one that needs approval, one that waits. */
import { z } from 'zod';
import { defineTool } from '../../src/tools/define.js';

/** Counts executions so tests can assert "ran exactly once". */
export const runs: Record<string, number> = {};

export const echoTool = defineTool({
  name: 'echo',
  description: 'Echo text back.',
  schema: z.object({ text: z.string() }),
  meta: { category: 'misc', defaultApproval: 'allow', primaryKey: 'text' },
  describe: (a) => `echo ${a.text}`,
  async execute(a) {
    runs.echo = (runs.echo ?? 0) + 1;
    return { output: `echo: ${a.text}` };
  },
});

export const dangerTool = defineTool({
  name: 'danger',
  description: 'Does something that needs approval.',
  schema: z.object({ target: z.string(), count: z.number().int().optional() }),
  meta: { category: 'write', defaultApproval: 'require', primaryKey: 'target' },
  describe: (a) => `danger ${a.target}`,
  targetPath: (a) => a.target,
  preview: (a) => `would touch ${a.target}`,
  async execute(a) {
    runs.danger = (runs.danger ?? 0) + 1;
    return { output: `touched ${a.target}` };
  },
});

/** Waits until aborted (or 30 s), for stop tests. */
export const sleepTool = defineTool({
  name: 'sleep',
  description: 'Sleep until stopped.',
  schema: z.object({ seconds: z.number().optional() }),
  meta: { category: 'misc', defaultApproval: 'allow' },
  describe: () => 'sleep',
  async execute(_a, ctx) {
    runs.sleep = (runs.sleep ?? 0) + 1;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 30_000);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(t);
        resolve();
      });
    });
    return { output: ctx.signal.aborted ? 'aborted' : 'slept' };
  },
});

/** A latch the test opens; the `hold` tool waits on it (or on abort). */
export const latch = {
  open: () => {},
  reset() {
    this.promise = new Promise<void>((r) => {
      this.open = r;
    });
  },
  promise: Promise.resolve(),
};

export const holdTool = defineTool({
  name: 'hold',
  description: 'Wait until the test opens the latch.',
  schema: z.object({}),
  meta: { category: 'misc', defaultApproval: 'allow' },
  describe: () => 'hold',
  async execute(_a, ctx) {
    runs.hold = (runs.hold ?? 0) + 1;
    await Promise.race([latch.promise, new Promise((r) => ctx.signal.addEventListener('abort', r))]);
    return { output: 'released' };
  },
});

export const testTools = [echoTool, dangerTool, sleepTool, holdTool];

/**
 * Counts back to zero and the latch open, as in a fresh process: run before every test file by
 * `test/setup/per-file.ts` (a worker's files share this module).
 */
export function resetTestTools(): void {
  for (const name of Object.keys(runs)) delete runs[name];
  latch.open();
  latch.open = () => {};
  latch.promise = Promise.resolve();
}
