import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { leafKeys } from '../../src/config-keys.js';
import { ENV_KEYS, configSchema, loadConfig } from '../../src/config.js';

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

describe('configuration reference table (docs/configuration.md, linked from the README)', () => {
  it('lists every short environment name with the key it sets, and only keys of the schema', async () => {
    const readme = (await import('node:fs')).readFileSync(
      path.resolve(import.meta.dirname, '../../docs/configuration.md'),
      'utf8',
    );
    // The two file-path variables name files, not keys.
    const rows = readme.split('\n').filter((l) => /^\| `[A-Z_]+`/.test(l) && !/SWITCHBOARD_(MCP_)?CONFIG`/.test(l));
    const listed = new Map<string, string>();
    for (const row of rows) {
      const [names = '', keys = ''] = row.split('|').slice(1, 3);
      const envNames = [...names.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1] as string);
      const dotted = [...keys.matchAll(/`([a-z_]+\.[a-z_.]+)`/g)].map((m) => m[1] as string);
      for (const [i, n] of envNames.entries()) listed.set(n, dotted[i] ?? dotted[0] ?? '');
    }
    for (const [name, key] of Object.entries(ENV_KEYS)) expect(listed.get(name), name).toBe(key);
    const all = new Set(leafKeys(configSchema));
    for (const key of listed.values()) expect(all.has(key), key).toBe(true);
    expect(readme).toContain('`SWITCHBOARD__<SECTION>__<KEY>`');
    const front = (await import('node:fs')).readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');
    expect(front).toContain('(docs/configuration.md)');
  });
});
