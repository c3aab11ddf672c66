/**
 * The file tools against a process that swaps a workspace folder for a symlink while they work
 * (issue: `read_file race/d/…` returned hidden files, `write_file` landed in switchboard's own
 * folder). Two hostile processes exchange, as fast as they can, a real folder with a symlink:
 * `race/d` ↔ `race/s` (→ a folder outside the workspace) and `race2/d` ↔ `race2/s` (→ the data
 * folder inside the workspace, whose database is protected). Meanwhile 500 calls of
 * `read_file`, `write_file`, `write_patch`, `list_files`, `search` (rg in its sandbox, rg over
 * descriptors, the JS fallback) and `send_attachment`'s copy run on paths below `race/d` and
 * `race2/d`. Not one of them may read,
 * list, find, copy or write anything outside the workspace or in the protected database — while
 * a plain `readFileSync` of the same path, run alongside, does reach the secret (so the race is
 * real and the test can fail).
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotWorkspaceFile, uploadOf } from '../../src/delivery/sent-files.js';
import { listFilesTool } from '../../src/tools/builtins/list-files.js';
import { readFileTool } from '../../src/tools/builtins/read-file.js';
import { createSearchTool } from '../../src/tools/builtins/search.js';
import { writeFileTool } from '../../src/tools/builtins/write-file.js';
import { writePatchTool } from '../../src/tools/builtins/write-patch.js';
import { PathPolicy } from '../../src/tools/path-policy.js';
import type { ToolResult } from '../../src/tools/types.js';
import { skipped } from '../helpers/skips.js';
import { skipReason } from '../helpers/system-tools.js';
import { makeContext, type TestContext } from '../tools/context.js';
import { startSwapper, type Swapper } from './swapper.js';

const SECRET = 'SECRET-marker-7f3a';
/**
 * Calls made while the folders are being swapped: 50 of each of the ten kinds. It was 1 000 (34 s
 * alone, most of it the JS search's worker threads); 500 is still plenty, because the swap is
 * met, not hoped for: the swappers exchange the names every few tens of microseconds while a call
 * takes milliseconds, and in a measured run 20–50 % of the calls of each kind on `race` were
 * refused (each a call that met the symlink and was stopped). A kind that followed the swapped
 * link even once in three such meetings would escape in 50 calls with a chance above
 * 1 − (1 − 0.3/3)^50 ≈ 99.5 %. The refusals are counted below, so a run that met the swap too
 * rarely fails instead of passing quietly.
 */
const CALLS = 500;
/** Calls in flight at once. */
const PARALLEL = 4;
/** The swappers stop by themselves after this long, whatever happens to the test. */
const SWAP_SECONDS = 150;

const noRipgrep = skipReason('rg', "the race covers search's ripgrep backend");

describe.skipIf(noRipgrep !== undefined)(
  `file tools against a folder swapped for a symlink${skipped(noRipgrep)}`,
  () => {
    let ctx: TestContext;
    let outside: string;
    let dataDir: string;
    const swappers: Swapper[] = [];
    /** Names and contents under a folder, to compare before and after. */
    const tree = (dir: string): string[] =>
      readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .sort()
        .map((n) => {
          const abs = path.join(dir, n);
          return statSync(abs).isFile() ? `${n}=${readFileSync(abs, 'utf8')}` : `${n}/`;
        });

    beforeAll(async () => {
      ctx = await makeContext();
      const ws = ctx.workspace;
      outside = path.join(ctx.tmp, 'outside');
      dataDir = path.join(ws, 'data');
      // Outside the workspace: the same names as in race/d, with the secret in them.
      mkdirSync(path.join(outside, 'sub'), { recursive: true });
      writeFileSync(path.join(outside, 'f.txt'), `${SECRET} outside\n`);
      writeFileSync(path.join(outside, 'sub', 'g.txt'), `${SECRET} outside sub\n`);
      writeFileSync(path.join(outside, 'only-outside.txt'), `${SECRET} only outside\n`);
      writeFileSync(path.join(outside, 'switchboard.toml'), `api_token = "${SECRET}-config"\n`);
      // Inside the workspace: the data folder with switchboard's database (protected).
      mkdirSync(dataDir);
      writeFileSync(path.join(dataDir, 'switchboard.db'), `SQLite format 3 ${SECRET}-db\n`);
      ctx.paths = new PathPolicy({
        root: ws,
        denyGlobs: ctx.config.workspace.deny_globs,
        protectedFiles: [
          { abs: path.join(outside, 'switchboard.toml'), what: "switchboard's configuration file" },
          { abs: path.join(dataDir, 'switchboard.db'), what: "switchboard's database" },
        ],
      });
      for (const [race, target] of [
        ['race', outside],
        ['race2', dataDir],
      ] as const) {
        mkdirSync(path.join(ws, race, 'd', 'sub'), { recursive: true });
        writeFileSync(path.join(ws, race, 'd', 'f.txt'), 'ok inside\n');
        writeFileSync(path.join(ws, race, 'd', 'sub', 'g.txt'), 'ok inside sub\n');
        writeFileSync(path.join(ws, race, 'd', 'switchboard.db'), 'ok: an ordinary file of that name\n');
        symlinkSync(target, path.join(ws, race, 's'));
      }
    });

    afterAll(async () => {
      for (const s of swappers.splice(0)) await s.stop();
      await ctx?.close();
    });

    it(`${CALLS} calls while the folders are swapped: nothing outside the workspace or protected is read, listed, found, copied or written`, async () => {
      const ws = ctx.workspace;
      const outsideBefore = tree(outside);
      const dbBefore = readFileSync(path.join(dataDir, 'switchboard.db'), 'utf8');
      for (const race of ['race', 'race2'])
        swappers.push(startSwapper(ctx.tmp, path.join(ws, race, 'd'), path.join(ws, race, 's'), SWAP_SECONDS));

      // The race is real: the same path read plainly meets the secret.
      let plainHits = 0;
      const plain = setInterval(() => {
        for (let i = 0; i < 50; i++) {
          try {
            if (readFileSync(path.join(ws, 'race/d/f.txt'), 'utf8').includes(SECRET)) plainHits++;
          } catch {
            // between the names (the Node swapper): try again
          }
        }
      }, 5);

      const rg = createSearchTool({ backend: 'rg' });
      const rgOverFds = createSearchTool({ backend: 'rg', rgSandbox: false });
      const js = createSearchTool({ backend: 'js' });
      const escapes: string[] = [];
      const outcomes = { done: 0, refused: 0, failed: 0 };
      const check = (what: string, text: string) => {
        if (text.includes(SECRET) || text.includes('only-outside')) escapes.push(`${what}: ${text.slice(0, 200)}`);
      };
      const tally = (r: ToolResult) => {
        if (r.status !== 'failed') outcomes.done++;
        else if (r.output.startsWith('refused')) outcomes.refused++;
        else outcomes.failed++;
      };
      const call = async (i: number): Promise<void> => {
        const race = i % 2 === 0 ? 'race' : 'race2';
        const kind = i % 10;
        let r: ToolResult;
        if (kind <= 2) {
          r = await ctx.run(readFileTool, { path: `${race}/d/${['f.txt', 'sub/g.txt', 'switchboard.db'][kind]}` });
        } else if (kind === 3) {
          r = await ctx.run(writeFileTool, { path: `${race}/d/sub/w-${i}.txt`, content: `written ${i}\n` });
        } else if (kind === 4) {
          r = await ctx.run(writePatchTool, {
            patches: [
              { op: 'create', path: `${race}/d/p-${i}.txt`, content: 'patched\n' },
              { op: 'replace', path: `${race}/d/f.txt`, content: 'ok inside\n' },
            ],
          });
        } else if (kind === 5) {
          r = await ctx.run(listFilesTool, { path: i % 4 === 1 ? race : `${race}/d` });
        } else if (kind === 6) {
          r = await ctx.run(i % 4 === 0 ? rg : rgOverFds, { query: 'SECRET|ok', path: `${race}/d` });
        } else if (kind === 7) {
          r = await ctx.run(js, { query: 'SECRET|ok', path: `${race}/d` });
        } else {
          // What send_attachment takes and every channel then sends: the copy.
          try {
            const copy = await snapshotWorkspaceFile(
              ctx.db,
              ctx.paths,
              `${race}/d/${kind === 8 ? 'f.txt' : 'sub/g.txt'}`,
            );
            const bytes = await (await uploadOf(ctx.db, { snapshot: copy.id, kind: 'file' })).bytes();
            r = { output: bytes.toString('utf8') };
          } catch (err) {
            r = { output: `refused: ${(err as Error).message}`, status: 'failed' };
          }
        }
        check(`call ${i}`, r.output);
        tally(r);
      };
      let next = 0;
      await Promise.all(
        Array.from({ length: PARALLEL }, async () => {
          while (next < CALLS) await call(next++);
        }),
      );
      clearInterval(plain);
      for (const s of swappers.splice(0)) await s.stop();

      expect(escapes).toEqual([]);
      // The race was met often (about a fifth of all calls are refused in a measured run).
      expect(outcomes.refused, 'calls that met the swap and were refused').toBeGreaterThan(CALLS / 20);
      expect(plainHits, 'a plain read of the same path met the secret (the swap is real)').toBeGreaterThan(0);
      // Most calls still work: the swap only refuses what would leave the workspace.
      expect(outcomes.done).toBeGreaterThan(CALLS / 4);
      // Nothing was written outside, and the protected database is as it was.
      expect(tree(outside)).toEqual(outsideBefore);
      expect(readFileSync(path.join(dataDir, 'switchboard.db'), 'utf8')).toBe(dbBefore);
      // What was written is in the real folders (under whichever name each has now), or in the
      // workspace where a symlink inside it led (the data folder is in this workspace).
      let written = 0;
      for (const race of ['race', 'race2']) {
        const real = ['d', 's'].map((n) => path.join(ws, race, n)).find((p) => lstatSync(p).isDirectory());
        expect(real, race).toBeDefined();
        written += readdirSync(path.join(real as string, 'sub')).filter((n) => n.startsWith('w-')).length;
      }
      expect(written).toBeGreaterThan(0);
    }, 240_000);
  },
);
