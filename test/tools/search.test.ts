import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listFilesTool } from '../../src/tools/builtins/list-files.js';
import { createSearchTool } from '../../src/tools/builtins/search.js';
import { skipped } from '../helpers/skips.js';
import { skipReason } from '../helpers/system-tools.js';
import { makeContext, type TestContext, writeTree } from './context.js';

let ctx: TestContext;
beforeEach(async () => {
  ctx = await makeContext();
  writeTree(ctx.workspace, {
    '.gitignore': 'build/\n*.log\n',
    'src/a.ts': 'export const alpha = 1;\n// needle one\nconst beta = 2;\n',
    'src/b.ts': 'line1\nline2\nneedle two\nline4\nline5\nneedle three\nline7\n',
    'src/nested/.gitignore': 'ignored.ts\n',
    'src/nested/ignored.ts': 'needle ignored by nested gitignore\n',
    'src/nested/kept.ts': 'needle kept\n',
    'build/out.js': 'needle in build\n',
    'debug.log': 'needle in log\n',
    'node_modules/pkg/index.js': 'needle in node_modules\n',
    '.hidden/h.txt': 'needle hidden\n',
    'secrets/token.txt': 'needle secret\n',
    'conf/.env.local': 'needle env\n',
    'bin.dat': Buffer.concat([Buffer.from('needle binary'), Buffer.from([0, 1, 2])]),
  });
  fs.writeFileSync(path.join(ctx.tmp, 'outside.txt'), 'needle outside\n');
  fs.symlinkSync(path.join(ctx.tmp, 'outside.txt'), path.join(ctx.workspace, 'src/out-link.txt'));
});
afterEach(async () => {
  await ctx.close();
});

describe('list_files', () => {
  it('lists with .gitignore, skipping .git, node_modules, hidden and denied entries', async () => {
    fs.mkdirSync(path.join(ctx.workspace, '.git'));
    const r = await ctx.run(listFilesTool, {});
    const lines = r.output.split('\n').slice(1);
    expect(lines).toContain('src/');
    expect(lines).toContain('src/a.ts');
    expect(lines).toContain('src/nested/kept.ts');
    expect(lines.some((l) => l.startsWith('src/out-link.txt -> '))).toBe(true);
    for (const gone of [
      'build/',
      'debug.log',
      'node_modules/',
      '.git/',
      '.hidden/',
      'secrets/',
      'src/nested/ignored.ts',
      'conf/.env.local',
    ]) {
      expect(lines, gone).not.toContain(gone);
    }
    const hidden = await ctx.run(listFilesTool, { include_hidden: true });
    expect(hidden.output).toContain('.hidden/h.txt');
    expect(hidden.output).not.toContain('.git/');
    expect(hidden.output).not.toContain('.env.local');
  });

  it('filters by glob and depth, and refuses paths outside', async () => {
    const r = await ctx.run(listFilesTool, { path: 'src', glob: '*.ts', max_depth: 1 });
    expect(r.output.split('\n').slice(1)).toEqual(['src/a.ts', 'src/b.ts']);
    const out = await ctx.run(listFilesTool, { path: '..' });
    expect(out.status).toBe('failed');
    expect(out.output).toContain('outside the workspace');
    const secret = await ctx.run(listFilesTool, { path: 'secrets' });
    expect(secret.status).toBe('failed');
  });
});

// The rg half needs ripgrep (installed by .ci/run and the Dockerfile); the JS fallback always runs.
const noRipgrep = skipReason('rg', 'the search tool’s ripgrep backend is tested against it');

// rg walks a folder in its own sandbox where bubblewrap runs; elsewhere it reads the files the
// confined walk opened, handed over as descriptors (`rgSandbox: false` forces that here).
for (const [backend, rgSandbox] of [
  ['rg', undefined],
  ['rg', false],
  ['js', undefined],
] as const) {
  const why = backend === 'rg' ? noRipgrep : undefined;
  const name = rgSandbox === false ? 'rg over descriptors' : backend;
  describe.skipIf(why !== undefined)(`search (${name})${skipped(why)}`, () => {
    const tool = createSearchTool({ backend, rgSandbox });

    it('finds matches with the same format and skips ignored, hidden, binary, denied and outside files', async () => {
      const r = await ctx.run(tool, { query: 'needle' });
      expect(r.status).toBeUndefined();
      expect(r.output.split('\n')).toEqual([
        '4 matches in 3 files',
        'src/a.ts:2:// needle one',
        'src/b.ts:3:needle two',
        'src/b.ts:6:needle three',
        'src/nested/kept.ts:1:needle kept',
      ]);
    });

    it('shows context lines and separators', async () => {
      const r = await ctx.run(tool, { query: 'needle (two|three)', path: 'src/b.ts', context_lines: 1 });
      expect(r.output.split('\n')).toEqual([
        '2 matches in 1 file',
        'src/b.ts-2-line2',
        'src/b.ts:3:needle two',
        'src/b.ts-4-line4',
        'src/b.ts-5-line5',
        'src/b.ts:6:needle three',
        'src/b.ts-7-line7',
      ]);
    });

    it('separates non-adjacent groups with --', async () => {
      writeTree(ctx.workspace, { 'g.txt': 'x\nhit\nx\nx\nx\nx\nhit\nx\n' });
      const r = await ctx.run(tool, { query: 'hit', path: 'g.txt', context_lines: 1 });
      expect(r.output.split('\n').slice(1)).toEqual([
        'g.txt-1-x',
        'g.txt:2:hit',
        'g.txt-3-x',
        '--',
        'g.txt-6-x',
        'g.txt:7:hit',
        'g.txt-8-x',
      ]);
    });

    it('has files and count modes, glob, and pages with offset', async () => {
      const files = await ctx.run(tool, { query: 'needle', output_mode: 'files', glob: '*.ts' });
      expect(files.output.split('\n').slice(1)).toEqual(['src/a.ts', 'src/b.ts', 'src/nested/kept.ts']);
      const count = await ctx.run(tool, { query: 'needle', output_mode: 'count' });
      expect(count.output).toContain('src/b.ts:2');
      const page = await ctx.run(tool, { query: 'needle', offset: 2 });
      expect(page.output.split('\n').slice(1)).toEqual(['src/b.ts:6:needle three', 'src/nested/kept.ts:1:needle kept']);
      const past = await ctx.run(tool, { query: 'needle', offset: 10 });
      expect(past.status).toBe('failed');
    });

    it('pages over many matches with a notice', async () => {
      writeTree(ctx.workspace, { 'many.txt': Array.from({ length: 250 }, (_, i) => `hit ${i + 1}`).join('\n') });
      const r = await ctx.run(tool, { query: '^hit', path: 'many.txt' });
      expect(r.output).toContain('[showing 1-100 of 250; continue with offset=100]');
      const r2 = await ctx.run(tool, { query: '^hit', path: 'many.txt', offset: 200 });
      expect(r2.output.split('\n')[1]).toBe('many.txt:201:hit 201');
      expect(r2.output).not.toContain('continue with');
    });

    it('gives a clear error for an invalid regex', async () => {
      const r = await ctx.run(tool, { query: 'foo(bar' });
      expect(r.status).toBe('failed');
      expect(r.output).toMatch(/^invalid regex: /);
    });

    it('supports look-ahead (rg retries with PCRE2)', async () => {
      const r = await ctx.run(tool, { query: 'needle (?=two)' });
      expect(r.output.split('\n')).toEqual(['1 match in 1 file', 'src/b.ts:3:needle two']);
    });

    it('refuses to search outside the workspace or in secrets/', async () => {
      for (const p of ['..', 'secrets', 'src/out-link.txt']) {
        const r = await ctx.run(tool, { query: 'needle', path: p });
        expect(r.status, p).toBe('failed');
        expect(r.output).toContain('refused');
      }
    });

    it('stops a catastrophically slow regex without freezing the process', async () => {
      writeTree(ctx.workspace, { 'redos.txt': `${'a'.repeat(40)}!\n` });
      const slow = createSearchTool({ backend, rgSandbox, timeoutMs: 1000 });
      let ticks = 0;
      const timer = setInterval(() => ticks++, 50);
      const r = await ctx.run(slow, { query: '^(a|a)+$', path: 'redos.txt' });
      clearInterval(timer);
      // rg's engine is linear-time and answers; the JS fallback is cut off by its time limit.
      if (backend === 'js') {
        expect(r.status).toBe('failed');
        expect(r.output).toContain('search timed out after 1 s');
        expect(ticks).toBeGreaterThan(5);
      } else {
        expect(r.output).toContain('No matches');
      }
    });

    it('cuts long lines', async () => {
      writeTree(ctx.workspace, { 'long.txt': `needle ${'y'.repeat(1000)}\n` });
      const r = await ctx.run(tool, { query: 'needle', path: 'long.txt' });
      expect(r.output).toContain('more chars]');
      expect(r.output.length).toBeLessThan(500);
    });
  });
}
