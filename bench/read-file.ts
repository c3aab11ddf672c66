/**
 * `read_file` of a line range in a 50 MB file (target: under 50 ms, flat memory): the first read
 * scans to the range; later reads start from the cached line checkpoints.
 * Run alone: `node --import tsx bench/read-file.ts`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { readFileTool } from '../src/tools/builtins/read-file.js';
import { benchContext, median } from './tool-context.js';

const LINES = 1_000_000;

function generate(file: string): void {
  const fd = fs.openSync(file, 'w');
  const block: string[] = [];
  for (let n = 1; n <= LINES; n++) {
    block.push(`${String(n).padStart(7, '0')} ${'lorem ipsum dolor sit amet '.repeat(1)}${'x'.repeat(14)}`);
    if (block.length === 50_000) {
      fs.writeSync(fd, `${block.join('\n')}\n`);
      block.length = 0;
    }
  }
  fs.closeSync(fd);
}

/** Generate the file, time cold and warm range reads, print the figures. */
export async function run(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-bench-read-'));
  const ws = path.join(tmp, 'ws');
  fs.mkdirSync(ws);
  try {
    const file = path.join(ws, 'big.log');
    generate(file);
    const size = fs.statSync(file).size;
    const ctx = await benchContext(ws, tmp);
    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sample = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 1);
    const time = async (offset: number) => {
      const s = performance.now();
      const r = await readFileTool.execute({ path: 'big.log', offset, limit: 50 }, ctx);
      const ms = performance.now() - s;
      if (r.status === 'failed' || !r.output.includes(`${String(offset).padStart(7, '0')} lorem`))
        throw new Error(r.output.slice(0, 300));
      return ms;
    };
    const cold = await time(900_000);
    const warm: number[] = [];
    for (let i = 0; i < 9; i++) warm.push(await time(900_000 + i * 1000));
    const head: number[] = [];
    for (let i = 0; i < 9; i++) head.push(await time(1 + i));
    clearInterval(sample);
    peak = Math.max(peak, process.memoryUsage().rss);
    console.log(
      `read_file 50-line range of a ${(size / 1e6).toFixed(0)} MB file: near line 900000 cold ${cold.toFixed(1)} ms, ` +
        `warm ${median(warm).toFixed(1)} ms (median of 9), at the start ${median(head).toFixed(1)} ms; ` +
        `RSS grew ${((peak - rss0) / 1e6).toFixed(1)} MB at peak`,
    );
    await ctx.close();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
