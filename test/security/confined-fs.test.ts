/**
 * The confined primitive's rules without a race (`src/tools/confined/`): symlinks that stay in
 * the workspace are followed (chains too), ones that leave it or loop are refused; a hard link to
 * switchboard's configuration is refused by its inode; a FIFO is refused without waiting for a
 * writer; a write through a symlink inside writes its target, through one leading outside
 * nothing; missing folders are made only below checked ones.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listFilesTool } from '../../src/tools/builtins/list-files.js';
import { readFileTool } from '../../src/tools/builtins/read-file.js';
import { writeFileTool } from '../../src/tools/builtins/write-file.js';
import { PathRefused, locate, openEntry } from '../../src/tools/confined/open.js';
import { createFile } from '../../src/tools/confined/write.js';
import { PathPolicy } from '../../src/tools/path-policy.js';
import { makeContext, type TestContext, writeTree } from '../tools/context.js';

let ctx: TestContext;
let config: string;
beforeEach(async () => {
  ctx = await makeContext();
  config = path.join(ctx.tmp, 'switchboard.toml');
  writeFileSync(config, 'api_token = "CONFIG-SECRET"\n');
  ctx.paths = new PathPolicy({
    root: ctx.workspace,
    denyGlobs: ctx.config.workspace.deny_globs,
    protectedFiles: [{ abs: config, what: "switchboard's configuration file" }],
  });
  mkdirSync(path.join(ctx.tmp, 'outside'));
  writeFileSync(path.join(ctx.tmp, 'outside', 'x.txt'), 'OUTSIDE-SECRET\n');
});
afterEach(async () => {
  await ctx.close();
});

const ws = (rel: string) => path.join(ctx.workspace, rel);

describe('the confined primitive', () => {
  it('follows symlinks that stay inside, relative and absolute, in chains; refuses loops and ones leading out', async () => {
    writeTree(ctx.workspace, { 'docs/real/a.txt': 'inside\n' });
    symlinkSync('real', ws('docs/rel-link'));
    symlinkSync(ws('docs/real'), ws('abs-link'));
    symlinkSync('docs/rel-link/a.txt', ws('chain.txt'));
    symlinkSync('loop-b', ws('loop-a'));
    symlinkSync('loop-a', ws('loop-b'));
    symlinkSync('../outside', ws('out'));
    for (const p of ['docs/rel-link/a.txt', 'abs-link/a.txt', 'chain.txt']) {
      const r = await ctx.run(readFileTool, { path: p });
      expect(r.output, p).toContain('inside');
      expect(r.output, p).toContain('docs/real/a.txt');
    }
    expect((await ctx.run(readFileTool, { path: 'loop-a' })).output).toBe('loop-a: too many symlinks');
    const out = await ctx.run(readFileTool, { path: 'out/x.txt' });
    expect(out.output).toMatch(/^refused: out\/x\.txt: outside the workspace/);
    expect(await locate(ctx.paths, 'chain.txt', 'read')).toBe(ws('docs/real/a.txt'));
  });

  it("refuses a hard link to switchboard's configuration by its inode, whatever its name", async () => {
    linkSync(config, ws('innocent.txt'));
    const r = await ctx.run(readFileTool, { path: 'innocent.txt' });
    expect(r.output).toBe("refused: innocent.txt: switchboard's configuration file; no tool may read or change it");
    const w = await ctx.run(writeFileTool, { path: 'innocent.txt', content: 'overwritten' });
    expect(w.output).toContain("switchboard's configuration file");
    expect(readFileSync(config, 'utf8')).toContain('CONFIG-SECRET');
  });

  it('opens a FIFO without waiting for a writer, and refuses it', async () => {
    execFileSync('mkfifo', [ws('pipe')]);
    const started = Date.now();
    const r = await ctx.run(readFileTool, { path: 'pipe' });
    expect(r.output).toBe('pipe: not a regular file');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('writes through a symlink inside to its target; through one leading out, writes nothing and makes no folder', async () => {
    writeTree(ctx.workspace, { 'notes/real.txt': 'old\n' });
    symlinkSync('real.txt', ws('notes/link.txt'));
    symlinkSync('../outside', ws('out'));
    const w = await ctx.run(writeFileTool, { path: 'notes/link.txt', content: 'new\n' });
    expect(w.output).toMatch(/^Replaced notes\/real\.txt/);
    expect(readFileSync(ws('notes/real.txt'), 'utf8')).toBe('new\n');
    for (const p of ['out/x.txt', 'out/deeper/y.txt']) {
      const r = await ctx.run(writeFileTool, { path: p, content: 'pwned' });
      expect(r.output, p).toMatch(/^refused: .*outside the writable roots/);
    }
    expect(readdirSync(path.join(ctx.tmp, 'outside'))).toEqual(['x.txt']);
    expect(readFileSync(path.join(ctx.tmp, 'outside', 'x.txt'), 'utf8')).toBe('OUTSIDE-SECRET\n');
    const made = await ctx.run(writeFileTool, { path: 'a/b/c.txt', content: 'deep\n' });
    expect(made.output).toMatch(/^Created a\/b\/c\.txt/);
  });

  it('creates a new file only where nothing is, never through a symlink planted at its name', async () => {
    symlinkSync(path.join(ctx.tmp, 'outside', 'planted.txt'), ws('upload.bin'));
    await expect(createFile(ctx.paths, 'upload.bin')).rejects.toThrow(/upload\.bin: outside the writable roots/);
    expect(existsSync(path.join(ctx.tmp, 'outside', 'planted.txt'))).toBe(false);
    const file = await createFile(ctx.paths, 'uploads/new.bin');
    await file.handle.write(Buffer.from('bytes'));
    await file.close();
    expect(readFileSync(ws('uploads/new.bin'), 'utf8')).toBe('bytes');
    await expect(createFile(ctx.paths, 'uploads/new.bin')).rejects.toMatchObject({ code: 'EEXIST' });
  });

  it('lists a symlink with its target and never enters it; a refusal is a PathRefused naming the path', async () => {
    writeTree(ctx.workspace, { 'src/a.ts': 'x' });
    symlinkSync('../../outside', ws('src/out'));
    const r = await ctx.run(listFilesTool, {});
    expect(r.output).toContain('src/out -> ../../outside');
    expect(r.output).not.toContain('x.txt');
    const err = await openEntry(ctx.paths, 'src/out/x.txt', 'read').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PathRefused);
    expect((err as Error).message).toMatch(/^src\/out\/x\.txt: outside the workspace/);
  });
});
