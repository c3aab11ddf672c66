/**
 * `search` over a generated tree of 20 000 files, against running `rg` directly on the same tree
 * (target: within 1.5×). Also times the JS fallback for reference.
 * Run alone: `node --import tsx bench/search.ts`.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createSearchTool } from '../src/tools/builtins/search.js';
import { benchContext, median } from './tool-context.js';

const FILES = 20_000;
const RUNS = 7;

function generate(root: string): void {
  let n = 0;
  for (let d = 0; n < FILES; d++) {
    const dir = path.join(root, `pkg${d % 20}`, `mod${d}`);
    fs.mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 100 && n < FILES; f++, n++) {
      const lines: string[] = [];
      for (let l = 0; l < 40; l++) {
        // About one file in 50 has a match for the selective query.
        const marker = n % 50 === 0 && l === 20 ? ` needle_${n}` : '';
        lines.push(`export function fn_${n}_${l}(value: number) { return value * ${l}; }${marker}`);
      }
      fs.writeFileSync(path.join(dir, `file${f}.ts`), `${lines.join('\n')}\n`);
    }
  }
}

function rgDirect(pattern: string, root: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('rg', ['--line-number', '--no-heading', '--regexp', pattern, '--', root], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    child.stdout.on('data', () => {});
    child.on('error', reject);
    child.on('close', () => resolve(performance.now() - t0));
  });
}

/** Generate the tree, time both, print the figures. */
export async function run(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-bench-search-'));
  const ws = path.join(tmp, 'ws');
  fs.mkdirSync(ws);
  try {
    const t0 = performance.now();
    generate(ws);
    console.log(`search: generated ${FILES} files in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const ctx = await benchContext(ws, tmp);
    const rgTool = createSearchTool({ backend: 'rg' });
    const jsTool = createSearchTool({ backend: 'js' });
    for (const [name, pattern] of [
      ['selective (400 matches)', 'needle_\\d+'],
      ['broad (capped at 5000)', 'return value'],
    ] as const) {
      // Warm the page cache once.
      await rgDirect(pattern, ws);
      const direct: number[] = [];
      const tool: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        direct.push(await rgDirect(pattern, ws));
        const s = performance.now();
        const r = await rgTool.execute({ query: pattern }, ctx);
        tool.push(performance.now() - s);
        if (r.status === 'failed') throw new Error(r.output);
      }
      const js: number[] = [];
      for (let i = 0; i < 3; i++) {
        const s = performance.now();
        await jsTool.execute({ query: pattern }, ctx);
        js.push(performance.now() - s);
      }
      const d = median(direct);
      const t = median(tool);
      console.log(
        `search ${name}: rg direct ${d.toFixed(0)} ms, search tool (rg) ${t.toFixed(0)} ms = ${(t / d).toFixed(2)}x, JS fallback ${median(js).toFixed(0)} ms (median of ${RUNS}/3)`,
      );
    }
    await ctx.close();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
