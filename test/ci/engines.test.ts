/**
 * The Node.js lines the README names are the lines `engines` declares, and every installed
 * package's own `engines` range includes each of them (the oldest and the newest release of the
 * line), so `npm ci` on a named line warns about no package.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[]; os?: string[]; cpu?: string[] }>;
};
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The lines `engines` allows, each as its lowest release and a late one (the major's x.99.0). */
function lines(range: string): { major: number; oldest: string; newest: string }[] {
  return range.split('||').map((part) => {
    const oldest = semver.minVersion(part.trim())?.version;
    if (!oldest) throw new Error(`engines part without a lowest version: ${part}`);
    const major = semver.major(oldest);
    return { major, oldest, newest: `${major}.99.0` };
  });
}

describe('Node.js lines', () => {
  const named = lines(pkg.engines.node);

  it('engines names LTS lines only, each with both ends inside its own range', () => {
    expect(named.length).toBeGreaterThan(0);
    for (const l of named) {
      expect(l.major % 2, `Node ${l.major} is not an LTS line`).toBe(0);
      expect(semver.satisfies(l.newest, pkg.engines.node)).toBe(true);
    }
  });

  it('the README names the same lines and the same lowest releases', () => {
    const sentence = readme.split('\n').find((line) => line.startsWith('Needs Node.js'));
    expect(sentence, 'the README has a "Needs Node.js" line').toBeDefined();
    const majors = [...(sentence as string).matchAll(/\b(\d{2})(?:\.(\d+))?\b/g)].map((m) => Number(m[1]));
    expect([...new Set(majors)].sort()).toEqual(named.map((l) => l.major).sort());
    for (const l of named) if (!l.oldest.endsWith('.0.0')) expect(sentence).toContain(l.oldest.replace(/\.0$/, ''));
  });

  it('every installed package’s own engines range includes each named line', () => {
    const misfits: string[] = [];
    for (const [where, entry] of Object.entries(lock.packages)) {
      if (!where || Array.isArray(entry.engines)) continue;
      const range = entry.engines?.node;
      if (!range) continue;
      for (const l of named)
        for (const v of [l.oldest, l.newest])
          if (!semver.satisfies(v, range))
            misfits.push(`${where.replace(/^.*node_modules\//, '')} (${range}) excludes ${v}`);
    }
    expect(misfits).toEqual([]);
  });
});
