import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editFileTool } from '../../src/tools/builtins/edit-file.js';
import { readFileTool } from '../../src/tools/builtins/read-file.js';
import { writeFileTool } from '../../src/tools/builtins/write-file.js';
import { writePatchTool } from '../../src/tools/builtins/write-patch.js';
import { sha256 } from '../../src/tools/file-io.js';
import { makeContext, type TestContext, writeTree } from './context.js';

let ctx: TestContext;
beforeEach(async () => {
  ctx = await makeContext();
});
afterEach(async () => {
  await ctx.close();
});

const read = (p: string) => fs.readFileSync(path.join(ctx.workspace, p), 'utf8');

describe('read_file', () => {
  it('returns numbered lines with the range, size and hash, and records the read', async () => {
    writeTree(ctx.workspace, { 'src/a.ts': 'one\ntwo\nthree\n' });
    const r = await ctx.run(readFileTool, { path: 'src/a.ts' });
    expect(r.status).toBeUndefined();
    expect(r.output).toContain(`src/a.ts (lines 1-3 of 3, 14 B, sha256 ${sha256('one\ntwo\nthree\n')})`);
    expect(r.output).toContain('     1\tone\n     2\ttwo\n     3\tthree');
    const rows = await ctx.db.selectFrom('file_reads').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.path).toBe(path.join(ctx.workspace, 'src/a.ts'));
  });

  it('reads a range and says how to continue', async () => {
    writeTree(ctx.workspace, { 'n.txt': Array.from({ length: 10 }, (_, i) => `l${i + 1}`).join('\n') });
    const r = await ctx.run(readFileTool, { path: 'n.txt', offset: 4, limit: 2 });
    expect(r.output).toContain('     4\tl4\n     5\tl5');
    expect(r.output).not.toContain('l6');
    expect(r.output).toContain('continue with offset=6');
  });

  it('refuses ../ escapes, outside symlinks and secrets/ without recording a read', async () => {
    fs.writeFileSync(path.join(ctx.tmp, 'outside.txt'), 'secret outside');
    writeTree(ctx.workspace, { 'secrets/key.txt': 'k', '.env': 'A=1' });
    fs.symlinkSync(path.join(ctx.tmp, 'outside.txt'), path.join(ctx.workspace, 'link.txt'));
    for (const p of [
      '../outside.txt',
      'link.txt',
      'secrets/key.txt',
      'src/../secrets/key.txt',
      '.env',
      path.join(ctx.tmp, 'outside.txt'),
    ]) {
      const r = await ctx.run(readFileTool, { path: p });
      expect(r.status, p).toBe('failed');
      expect(r.output, p).toMatch(/refused: .*(outside the workspace|deny rule)/);
      expect(r.output).not.toContain('secret outside');
    }
    expect(await ctx.db.selectFrom('file_reads').selectAll().execute()).toHaveLength(0);
  });

  it('refuses a symlink inside the workspace that points at a denied file', async () => {
    writeTree(ctx.workspace, { 'secrets/key.txt': 'TOPSECRET' });
    fs.symlinkSync(path.join(ctx.workspace, 'secrets/key.txt'), path.join(ctx.workspace, 'innocent.txt'));
    const r = await ctx.run(readFileTool, { path: 'innocent.txt' });
    expect(r.status).toBe('failed');
    expect(r.output).toContain('deny rule');
    expect(r.output).not.toContain('TOPSECRET');
  });

  it('reports a binary file instead of dumping it', async () => {
    writeTree(ctx.workspace, { 'img.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]) });
    const r = await ctx.run(readFileTool, { path: 'img.png' });
    expect(r.status).toBe('failed');
    expect(r.output).toContain('binary file (PNG image');
  });

  it('reads a line range of a 50 MB file without reading the whole file', async () => {
    const big = path.join(ctx.workspace, 'big.log');
    const fd = fs.openSync(big, 'w');
    const block: string[] = [];
    let n = 0;
    while (n < 1_000_000) {
      block.push(`line ${++n} ${'x'.repeat(40)}`);
      if (block.length === 50_000) {
        fs.writeSync(fd, `${block.join('\n')}\n`);
        block.length = 0;
      }
    }
    fs.closeSync(fd);
    expect(fs.statSync(big).size).toBeGreaterThan(50_000_000);
    const r = await ctx.run(readFileTool, { path: 'big.log', offset: 987_654, limit: 3 });
    expect(r.status).toBeUndefined();
    expect(r.output).toContain(`987654\tline 987654 ${'x'.repeat(40)}`);
    expect(r.output).toContain(`987656\tline 987656 `);
    expect(r.output).not.toContain('line 987657');
    expect(r.output).not.toContain('sha256');
    // Second read uses the cached checkpoints and still lands on the right line.
    const again = await ctx.run(readFileTool, { path: 'big.log', offset: 999_999, limit: 5 });
    expect(again.output).toContain('999999\tline 999999');
    expect(again.output).toContain('1000000\tline 1000000');
    expect(again.output).toContain('of 1000000');
  });

  it('caps output by bytes with a notice', async () => {
    await ctx.close();
    ctx = await makeContext({ config: { tools: { read_max_bytes: 1000 } } });
    writeTree(ctx.workspace, { 'w.txt': Array.from({ length: 500 }, (_, i) => `row ${i + 1}`).join('\n') });
    const r = await ctx.run(readFileTool, { path: 'w.txt' });
    expect(r.output).toMatch(/output capped at .*; continue with offset=\d+/);
    expect(r.output.length).toBeLessThan(3000);
  });
});

describe('write_file', () => {
  it('creates parents, writes atomically, keeps the mode and audits', async () => {
    let r = await ctx.run(writeFileTool, { path: 'deep/new/f.sh', content: 'echo hi\n' });
    expect(r.output).toContain('Created deep/new/f.sh');
    expect(read('deep/new/f.sh')).toBe('echo hi\n');
    fs.chmodSync(path.join(ctx.workspace, 'deep/new/f.sh'), 0o750);
    r = await ctx.run(writeFileTool, { path: 'deep/new/f.sh', content: 'echo bye\n' });
    expect(r.output).toContain('Replaced');
    expect(fs.statSync(path.join(ctx.workspace, 'deep/new/f.sh')).mode & 0o777).toBe(0o750);
    expect(fs.readdirSync(path.join(ctx.workspace, 'deep/new'))).toEqual(['f.sh']);
    const audit = ctx.audits.filter((a) => a.kind === 'file_write');
    expect(audit).toHaveLength(2);
    expect(audit[1]?.data).toMatchObject({
      operation: 'replace',
      path: 'deep/new/f.sh',
      sha256_before: sha256('echo hi\n'),
      sha256_after: sha256('echo bye\n'),
      bytes: 9,
    });
    const rows = await ctx.db.selectFrom('audit').selectAll().where('kind', '=', 'file_write').execute();
    expect(rows).toHaveLength(2);
  });

  it('replaces a file too large to hold, hashing the old content as a stream', async () => {
    const big = Buffer.alloc(20 * 1024 * 1024, 'a');
    writeTree(ctx.workspace, { 'huge.txt': big });
    const r = await ctx.run(writeFileTool, { path: 'huge.txt', content: 'small now' });
    expect(r.output).toContain('Replaced huge.txt');
    expect(read('huge.txt')).toBe('small now');
    expect(ctx.audits[0]?.data).toMatchObject({
      operation: 'replace',
      sha256_before: sha256(big),
      sha256_after: sha256('small now'),
    });
  });

  it('refuses writes outside the workspace, through symlinks and into secrets/', async () => {
    fs.mkdirSync(path.join(ctx.tmp, 'out'));
    fs.symlinkSync(path.join(ctx.tmp, 'out'), path.join(ctx.workspace, 'outlink'));
    for (const p of ['../x.txt', 'outlink/x.txt', 'secrets/x.txt', 'a/../../x.txt']) {
      const r = await ctx.run(writeFileTool, { path: p, content: 'x' });
      expect(r.status, p).toBe('failed');
      expect(r.output).toContain('refused');
    }
    expect(fs.readdirSync(path.join(ctx.tmp, 'out'))).toEqual([]);
    expect(fs.existsSync(path.join(ctx.tmp, 'x.txt'))).toBe(false);
    expect(fs.existsSync(path.join(ctx.workspace, 'secrets'))).toBe(false);
    expect(ctx.audits).toHaveLength(0);
  });
});

describe('edit_file', () => {
  beforeEach(() => {
    writeTree(ctx.workspace, { 'a.txt': 'alpha\nbeta\ngamma\nbeta\n' });
  });

  it('needs a prior read', async () => {
    const r = await ctx.run(editFileTool, { path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' });
    expect(r.status).toBe('failed');
    expect(r.output).toContain('read it with read_file first');
    expect(read('a.txt')).toBe('alpha\nbeta\ngamma\nbeta\n');
  });

  it('replaces exactly one match, then allows a follow-up edit without re-reading', async () => {
    await ctx.run(readFileTool, { path: 'a.txt' });
    let r = await ctx.run(editFileTool, { path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' });
    expect(r.status).toBeUndefined();
    expect(r.output).toContain('replaced 1 occurrence at line 1');
    r = await ctx.run(editFileTool, { path: 'a.txt', old_string: 'gamma', new_string: 'GAMMA' });
    expect(r.status).toBeUndefined();
    expect(read('a.txt')).toBe('ALPHA\nbeta\nGAMMA\nbeta\n');
    expect(ctx.audits.map((a) => a.data.operation)).toEqual(['edit', 'edit']);
  });

  it('refuses 0 and 2 matches with counts and lines, and leaves the file alone', async () => {
    await ctx.run(readFileTool, { path: 'a.txt' });
    let r = await ctx.run(editFileTool, { path: 'a.txt', old_string: 'delta', new_string: 'x' });
    expect(r.status).toBe('failed');
    expect(r.output).toContain('not found (0 matches)');
    r = await ctx.run(editFileTool, { path: 'a.txt', old_string: 'beta', new_string: 'x' });
    expect(r.status).toBe('failed');
    expect(r.output).toContain('matches 2 times (lines 2, 4)');
    expect(read('a.txt')).toBe('alpha\nbeta\ngamma\nbeta\n');
    expect(ctx.audits).toHaveLength(0);
  });

  it('picks by near_line or replaces all', async () => {
    await ctx.run(readFileTool, { path: 'a.txt' });
    await ctx.run(editFileTool, { path: 'a.txt', old_string: 'beta', new_string: 'B4', near_line: 5 });
    expect(read('a.txt')).toBe('alpha\nbeta\ngamma\nB4\n');
    await ctx.run(editFileTool, { path: 'a.txt', old_string: 'a', new_string: 'A', replace_all: true });
    expect(read('a.txt')).toBe('AlphA\nbetA\ngAmmA\nB4\n');
  });

  it('keeps both of two parallel edits of one file', async () => {
    await ctx.run(readFileTool, { path: 'a.txt' });
    const [one, two] = await Promise.all([
      ctx.run(editFileTool, { path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' }),
      ctx.run(editFileTool, { path: 'a.txt', old_string: 'gamma', new_string: 'GAMMA' }),
    ]);
    expect(one.status).toBeUndefined();
    expect(two.status).toBeUndefined();
    expect(read('a.txt')).toBe('ALPHA\nbeta\nGAMMA\nbeta\n');
  });

  it('refuses a stale expected_before_hash and a file changed since the read', async () => {
    await ctx.run(readFileTool, { path: 'a.txt' });
    let r = await ctx.run(editFileTool, {
      path: 'a.txt',
      old_string: 'alpha',
      new_string: 'x',
      expected_before_hash: sha256('something else'),
    });
    expect(r.status).toBe('failed');
    expect(r.output).toContain('stale');
    fs.writeFileSync(path.join(ctx.workspace, 'a.txt'), 'alpha\nchanged\n');
    r = await ctx.run(editFileTool, { path: 'a.txt', old_string: 'alpha', new_string: 'x' });
    expect(r.status).toBe('failed');
    expect(r.output).toContain('changed on disk since you last read it');
    expect(read('a.txt')).toBe('alpha\nchanged\n');
  });
});

describe('write_patch', () => {
  it('applies a batch all together', async () => {
    writeTree(ctx.workspace, { 'a.txt': 'one\ntwo\n', 'b.txt': 'old' });
    await ctx.run(readFileTool, { path: 'a.txt' });
    const r = await ctx.run(writePatchTool, {
      patches: [
        { op: 'create', path: 'c/new.txt', content: 'fresh' },
        { op: 'edit', path: 'a.txt', old_string: 'one', new_string: 'ONE' },
        { op: 'edit', path: 'a.txt', old_string: 'two', new_string: 'TWO' },
        { op: 'replace', path: 'b.txt', content: 'new', expected_before_hash: sha256('old') },
      ],
    });
    expect(r.status).toBeUndefined();
    expect(read('a.txt')).toBe('ONE\nTWO\n');
    expect(read('b.txt')).toBe('new');
    expect(read('c/new.txt')).toBe('fresh');
    expect(ctx.audits).toHaveLength(3);
  });

  it('writes nothing when the third edit fails', async () => {
    writeTree(ctx.workspace, { 'a.txt': 'one\ntwo\n', 'b.txt': 'bee\n' });
    await ctx.run(readFileTool, { path: 'a.txt' });
    await ctx.run(readFileTool, { path: 'b.txt' });
    const r = await ctx.run(writePatchTool, {
      patches: [
        { op: 'edit', path: 'a.txt', old_string: 'one', new_string: 'ONE' },
        { op: 'create', path: 'n.txt', content: 'n' },
        { op: 'edit', path: 'b.txt', old_string: 'missing', new_string: 'x' },
      ],
    });
    expect(r.status).toBe('failed');
    expect(r.output).toContain('patch 3 (edit b.txt): old_string not found');
    expect(r.output).toContain('nothing was written');
    expect(read('a.txt')).toBe('one\ntwo\n');
    expect(read('b.txt')).toBe('bee\n');
    expect(fs.existsSync(path.join(ctx.workspace, 'n.txt'))).toBe(false);
    expect(ctx.audits).toHaveLength(0);
  });

  it('never clobbers with create, and refuses edits of unread files', async () => {
    writeTree(ctx.workspace, { 'a.txt': 'keep' });
    let r = await ctx.run(writePatchTool, { patches: [{ op: 'create', path: 'a.txt', content: 'x' }] });
    expect(r.output).toContain('already exists');
    r = await ctx.run(writePatchTool, {
      patches: [{ op: 'edit', path: 'a.txt', old_string: 'keep', new_string: 'x' }],
    });
    expect(r.output).toContain('read it with read_file first');
    expect(read('a.txt')).toBe('keep');
  });

  it('rejects patches missing or mixing fields at validation', async () => {
    let r = await ctx.run(writePatchTool, { patches: [{ op: 'edit', path: 'a.txt', new_string: 'x' }] });
    expect(r.status).toBe('failed');
    expect(r.output).toContain('patches.0.old_string: required for op "edit"');
    r = await ctx.run(writePatchTool, { patches: [{ op: 'create', path: 'n.txt', content: 'x', old_string: 'y' }] });
    expect(r.output).toContain('patches.0.old_string: not used by op "create"');
    r = await ctx.run(writePatchTool, { patches: [{ op: 'replace', path: 'n.txt' }] });
    expect(r.output).toContain('patches.0.content: required for op "replace"');
    expect(fs.existsSync(path.join(ctx.workspace, 'n.txt'))).toBe(false);
  });
});
