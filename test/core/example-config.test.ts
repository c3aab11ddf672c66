import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema, loadConfig } from '../../src/config.js';

const EXAMPLE = path.resolve(import.meta.dirname, '../../config/switchboard.example.toml');

function keys(shape: Record<string, any>, prefix = ''): string[] {
  return Object.entries(shape).flatMap(([k, v]) => {
    let inner = v;
    while (inner?.def?.innerType) inner = inner.def.innerType;
    return inner?.shape ? keys(inner.shape, `${prefix}${k}.`) : [`${prefix}${k}`];
  });
}

describe('config/switchboard.example.toml', () => {
  it('is valid and equals the defaults', () => {
    const fromExample = loadConfig({ path: EXAMPLE, env: {} });
    expect(fromExample).toEqual(loadConfig({ env: {} }));
  });

  it('documents every key of the schema', async () => {
    const text = (await import('node:fs')).readFileSync(EXAMPLE, 'utf8');
    const missing = keys(configSchema.shape).filter((k) => {
      const leaf = k.split('.').at(-1) as string;
      const asKey = new RegExp(`^#?\\s*${leaf}\\s*=`, 'm').test(text);
      return !asKey && !text.includes(`[[${k}]]`);
    });
    expect(missing).toEqual([]);
  });
});
