/**
 * The import rules of src/ (no circle anywhere, src/contract/ a leaf, each top-level folder below
 * the ones that import it: no folder loop, a channel folder importing only itself and src/kit/), checked with dependency-cruiser and the same
 * configuration `npm run lint` uses.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const bin = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const config = path.join(root, '.dependency-cruiser.cjs');

async function cruise(cwd: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, 'src', '--config', config, '--output-type', 'err'], {
      cwd,
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

// A cruise of the whole of src/ takes about 5 s of CPU (the TypeScript resolver over 300 modules);
// on a loaded 2-core machine its wall time passed the default 20 s.
const CRUISE_MS = 60_000;

describe('imports in src/', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'sb-imports-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

  it(
    'have no circle, no folder loop, and src/contract/ imports only itself and store row types',
    async () => {
      const { code, out } = await cruise(root);
      expect(out).toContain('no dependency violations');
      expect(code).toBe(0);
    },
    CRUISE_MS,
  );

  it(
    'the checker reports a circle made of type-only imports, and a contract importing a working module',
    async () => {
      mkdirSync(path.join(tmp, 'src/contract'), { recursive: true });
      mkdirSync(path.join(tmp, 'src/core'), { recursive: true });
      writeFileSync(
        path.join(tmp, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
      );
      writeFileSync(
        path.join(tmp, 'src/core/a.ts'),
        "import type { B } from './b.js';\nexport interface A { b?: B }\n",
      );
      writeFileSync(
        path.join(tmp, 'src/core/b.ts'),
        "import type { A } from './a.js';\nexport interface B { a?: A }\n",
      );
      writeFileSync(
        path.join(tmp, 'src/contract/c.ts'),
        "import type { A } from '../core/a.js';\nexport type C = A;\n",
      );
      const { code, out } = await cruise(tmp);
      expect(code).not.toBe(0);
      expect(out).toMatch(/no-circular: src\/core\/a\.ts/);
      expect(out).toMatch(/contract-is-a-leaf: src\/contract\/c\.ts → src\/core\/a\.ts/);
    },
    CRUISE_MS,
  );

  it(
    'the checker reports a folder loop made of files that form no circle, a base file importing a folder, and a folder in no layer',
    async () => {
      const dir = path.join(tmp, 'layers');
      for (const folder of ['core', 'delivery', 'gadgets'])
        mkdirSync(path.join(dir, 'src', folder), { recursive: true });
      writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
      );
      // core/a → delivery/b and delivery/c → core/d: four files, no circle, but core ↔ delivery.
      writeFileSync(
        path.join(dir, 'src/core/a.ts'),
        "import type { B } from '../delivery/b.js';\nexport type A = B;\n",
      );
      writeFileSync(path.join(dir, 'src/delivery/b.ts'), 'export type B = string;\n');
      writeFileSync(
        path.join(dir, 'src/delivery/c.ts'),
        "import type { D } from '../core/d.js';\nexport type C = D;\n",
      );
      writeFileSync(path.join(dir, 'src/core/d.ts'), 'export type D = number;\n');
      writeFileSync(
        path.join(dir, 'src/config.ts'),
        "import type { D } from './core/d.js';\nexport type Config = D;\n",
      );
      writeFileSync(
        path.join(dir, 'src/gadgets/k.ts'),
        "import type { B } from '../delivery/b.js';\nexport type K = B;\n",
      );
      const { code, out } = await cruise(dir);
      expect(code).not.toBe(0);
      expect(out).not.toMatch(/no-circular/);
      expect(out).toMatch(/layer-delivery: src\/delivery\/c\.ts → src\/core\/d\.ts/);
      expect(out).not.toMatch(/src\/core\/a\.ts → src\/delivery\/b\.ts/);
      expect(out).toMatch(/layer-base: src\/config\.ts → src\/core\/d\.ts/);
      expect(out).toMatch(/in-a-layer: src\/gadgets\/k\.ts/);
    },
    CRUISE_MS,
  );

  it(
    'the checker reports a channel importing anything of src/ but its own folder and the kit',
    async () => {
      const dir = path.join(tmp, 'kit');
      for (const folder of ['delivery', 'kit', 'channels/a', 'channels/b'])
        mkdirSync(path.join(dir, 'src', folder), { recursive: true });
      writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
      );
      writeFileSync(path.join(dir, 'src/delivery/n.ts'), 'export const N = 1;\n');
      writeFileSync(path.join(dir, 'src/kit/index.ts'), "export { N } from '../delivery/n.js';\n");
      writeFileSync(path.join(dir, 'src/channels/a/own.ts'), 'export const OWN = 2;\n');
      // Allowed: its own folder, the kit, a node module. Refused: delivery directly, and another
      // channel's folder even by a type-only import.
      writeFileSync(
        path.join(dir, 'src/channels/a/x.ts'),
        [
          "import path from 'node:path';",
          "import { N } from '../../kit/index.js';",
          "import { OWN } from './own.js';",
          "import { N as M } from '../../delivery/n.js';",
          "import type { Y } from '../b/y.js';",
          'export const X: Y = N + OWN + M + path.sep.length;',
          '',
        ].join('\n'),
      );
      writeFileSync(path.join(dir, 'src/channels/b/y.ts'), 'export type Y = number;\n');
      // The registry is not a channel folder: it imports each channel's declaration.
      writeFileSync(
        path.join(dir, 'src/channels/registry.ts'),
        "import { X } from './a/x.js';\nexport const ALL = [X];\n",
      );
      const { code, out } = await cruise(dir);
      expect(code).not.toBe(0);
      const refused = out.match(/channel-imports-only-the-kit: \S+ → \S+/g) ?? [];
      expect(refused.sort()).toEqual([
        'channel-imports-only-the-kit: src/channels/a/x.ts → src/channels/b/y.ts',
        'channel-imports-only-the-kit: src/channels/a/x.ts → src/delivery/n.ts',
      ]);
    },
    CRUISE_MS,
  );
  it(
    'the checker reports a channel config.ts importing anything but zod and src/config-section.ts',
    async () => {
      const dir = path.join(tmp, 'channel-config');
      mkdirSync(path.join(dir, 'src/channels/chat'), { recursive: true });
      writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
      );
      writeFileSync(path.join(dir, 'src/config-section.ts'), 'export type Section = { name: string };\n');
      writeFileSync(path.join(dir, 'src/channels/kind.ts'), 'export type Kind = { name: string };\n');
      writeFileSync(path.join(dir, 'src/channels/chat/api.ts'), 'export type Api = string;\n');
      writeFileSync(
        path.join(dir, 'src/channels/chat/config.ts'),
        "import type { Section } from '../../config-section.js';\nimport type { Kind } from '../kind.js';\n" +
          "import type { Api } from './api.js';\nexport type C = [Section, Kind, Api];\n",
      );
      const { code, out } = await cruise(dir);
      expect(code).not.toBe(0);
      expect(out).toMatch(/channel-config-is-plain: src\/channels\/chat\/config\.ts → src\/channels\/kind\.ts/);
      // Its own folder is no exception: the rest of the folder is the channel, above the configuration.
      expect(out).toMatch(/channel-config-is-plain: src\/channels\/chat\/config\.ts → src\/channels\/chat\/api\.ts/);
      expect(out).not.toMatch(/config\.ts → src\/config-section\.ts/);
    },
    CRUISE_MS,
  );
});
