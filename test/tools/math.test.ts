import { afterAll, describe, expect, it } from 'vitest';
import { mathTool } from '../../src/tools/builtins/math.js';
import { stopMath } from '../../src/tools/math-runner.js';
import { makeContext } from './context.js';

afterAll(async () => {
  await stopMath();
});

describe('math', () => {
  it('evaluates expressions, units and several lines', async () => {
    const ctx = await makeContext();
    try {
      expect((await ctx.run(mathTool, { expression: '2 + 3 * 4' })).output).toBe('14');
      expect((await ctx.run(mathTool, { expression: '5 cm to inch' })).output).toBe('1.9685039370079 inch');
      expect((await ctx.run(mathTool, { expression: 'det([1,2;3,4])' })).output).toBe('-2');
      expect((await ctx.run(mathTool, { expression: 'a = 3\nb = a^2\nb + 1' })).output).toBe('3\n9\n10');
      const bad = await ctx.run(mathTool, { expression: '2 +' });
      expect(bad.status).toBe('failed');
      expect(bad.output).toMatch(/^math error: /);
    } finally {
      await ctx.close();
    }
  });

  it('refuses the unsafe functions', async () => {
    const ctx = await makeContext();
    try {
      for (const e of ['import({x: 1})', 'evaluate("1+1")', 'parse("1+1")', 'createUnit("foo")', 'simplify("x+x")']) {
        const r = await ctx.run(mathTool, { expression: e });
        expect(r.status, e).toBe('failed');
        expect(r.output, e).toMatch(/disabled|Undefined/);
      }
      // mathjs blocks prototype access; nothing of the host is reachable.
      const proto = await ctx.run(mathTool, { expression: 'f = 1; f.constructor' });
      expect(proto.status).toBe('failed');
    } finally {
      await ctx.close();
    }
  });

  it('stops a computation that runs past the time limit, then works again', async () => {
    const ctx = await makeContext({ config: { tools: { math_timeout_ms: 300 } } });
    try {
      const r = await ctx.run(mathTool, { expression: 'sum(range(1, 100000000))' });
      expect(r.status).toBe('failed');
      expect(r.output).toMatch(/timed out after 300 ms|out of memory|worker stopped/);
      expect((await ctx.run(mathTool, { expression: '1 + 1' })).output).toBe('2');
    } finally {
      await ctx.close();
    }
  });
});
