import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolRegistry } from '../../src/core/tool-registry.js';
import { defineTool } from '../../src/tools/define.js';

const tool = (name: string) =>
  defineTool({
    name,
    description: `the ${name} tool`,
    schema: z.object({ x: z.string() }),
    meta: { category: 'misc', defaultApproval: 'allow' },
    describe: () => name,
    execute: async () => ({ output: name }),
  });

describe('model-facing tool lists', () => {
  it('are built once per catalog: the same tools give the same array until a tool is registered', () => {
    const registry = new ToolRegistry();
    registry.register(tool('a'));
    registry.register(tool('b'));
    const first = registry.modelTools(registry.all());
    expect(registry.modelTools(registry.all())).toBe(first);
    expect(first.map((t) => t.name)).toEqual(['a', 'b']);
    const onlyA = registry.modelTools(registry.all().filter((t) => t.name === 'a'));
    expect(onlyA).not.toBe(first);
    expect(onlyA.map((t) => t.name)).toEqual(['a']);

    registry.register(tool('c'));
    const after = registry.modelTools(registry.all());
    expect(after).not.toBe(first);
    expect(after.map((t) => t.name)).toEqual(['a', 'b', 'c']);
    expect(after[2]?.parameters).toMatchObject({ type: 'object' });
  });
});
