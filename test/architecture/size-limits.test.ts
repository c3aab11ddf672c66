/**
 * The size limits `npm run lint` checks (scripts/size-limits.mjs): how code lines are counted, and
 * that a part over its limit fails the script with its name. Whether src/ holds them today is the
 * lint's job, not this test's.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without type declarations
import { codeLines, LIMITS, measure } from '../../scripts/size-limits.mjs';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

describe('size limits', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'sb-size-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('counts code lines: not blanks, not line or block comments, but code beside a comment', () => {
    const source = [
      '/**',
      ' * A doc comment',
      ' */',
      '',
      '// a line comment',
      'const a = 1; // trailing',
      '/* one-line block */',
      '/* block */ const b = 2;',
      '/* opened',
      '   closed */ const c = 3;',
      '   ',
      'export { a, b, c };',
    ].join('\n');
    expect(codeLines(source)).toBe(4);
  });

  it('names each part over its limit and exits 1; within limits it exits 0', async () => {
    const script = path.join(tmp, 'scripts', 'size-limits.mjs');
    mkdirSync(path.dirname(script), { recursive: true });
    cpSync(path.join(root, 'scripts', 'size-limits.mjs'), script);
    for (const [part, limit] of LIMITS as Array<[string, number]>) {
      const file = part.endsWith('.ts') ? path.join(tmp, part) : path.join(tmp, part, 'index.ts');
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, 'export const x = 1;\n'.repeat(part.includes('slack') ? limit + 1 : limit));
    }
    expect(measure(tmp).find((m: { part: string }) => m.part === 'src/channels/slack').lines).toBe(1501);
    const failed = await run(process.execPath, [script]).then(
      () => null,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr.trim()).toBe('size limit: src/channels/slack has 1501 code lines, the limit is 1500');
    writeFileSync(path.join(tmp, 'src/channels/slack/index.ts'), 'export const x = 1;\n'.repeat(1500));
    await expect(run(process.execPath, [script])).resolves.toBeTruthy();
  });
});
