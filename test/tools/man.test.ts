import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { manTool, plainText } from '../../src/tools/builtins/man.js';
import { skipped } from '../helpers/skips.js';
import { skipReason } from '../helpers/system-tools.js';
import { makeContext } from './context.js';

// man itself (installed by .ci/run and the Dockerfile) and a page to read: slim images strip
// /usr/share/man, so a machine with man but without the page for ls skips with that reason.
const noMan = skipReason('man', 'the man tool reads real manual pages');
const noPage =
  noMan ??
  (spawnSync('man', ['-w', 'ls'], { stdio: 'ignore' }).status === 0
    ? undefined
    : 'no manual page for ls is installed on this machine');

describe('man', () => {
  // The failure paths below run everywhere.
  it.skipIf(noPage !== undefined)(`returns a page as plain text${skipped(noPage)}`, async () => {
    const ctx = await makeContext();
    try {
      const r = await ctx.run(manTool, { page: 'ls', section: '1' });
      expect(r.status).toBeUndefined();
      expect(r.output).toMatch(/ls - list directory contents/);
      expect(r.output).not.toContain('\b');
    } finally {
      await ctx.close();
    }
  });

  it('reports a missing page and refuses option-like names', async () => {
    const ctx = await makeContext();
    try {
      const r = await ctx.run(manTool, { page: 'no-such-page-xyz' });
      expect(r.status).toBe('failed');
      expect(r.output).toMatch(/no manual page for no-such-page-xyz|man is not installed/);
      const opt = await ctx.run(manTool, { page: '-Hfirefox' });
      expect(opt.status).toBe('failed');
      expect(opt.output).toContain('invalid arguments');
    } finally {
      await ctx.close();
    }
  });

  it('reports when man is not installed', async () => {
    const ctx = await makeContext();
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const r = await ctx.run(manTool, { page: 'ls' });
      expect(r.status).toBe('failed');
      expect(r.output).toContain('man is not installed');
    } finally {
      process.env.PATH = path;
      await ctx.close();
    }
  });

  it('strips overstrikes', () => {
    expect(plainText('N\bNA\bAM\bME\bE _\bx')).toBe('NAME x');
  });
});
