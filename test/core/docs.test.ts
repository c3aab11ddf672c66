import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOCS = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith('.md'),
);

describe('documentation', () => {
  it('links and cites only files the repository has', () => {
    const missing: string[] = [];
    for (const doc of DOCS) {
      const text = readFileSync(path.join(ROOT, doc), 'utf8');
      const dir = path.dirname(path.join(ROOT, doc));
      for (const m of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = m[1] as string;
        if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
        if (!existsSync(path.resolve(dir, target))) missing.push(`${doc}: ${target}`);
      }
      for (const m of text.matchAll(/`([\w./-]+\.(?:md|toml))`/g)) {
        const target = m[1] as string;
        if (/^(\.\/)?switchboard\.toml$/.test(target)) continue; // the user's own file
        if (!existsSync(path.resolve(ROOT, target)) && !existsSync(path.resolve(dir, target)))
          missing.push(`${doc}: ${target}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('the README stays the user’s path: at most 250 lines, internals in docs/', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(251); // 250 lines and the final newline
    for (const doc of ['architecture', 'delivery', 'scale-out', 'benchmarks'])
      expect(readme).toContain(`](docs/${doc}.md)`);
  });
});
