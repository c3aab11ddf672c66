/**
 * Worker thread for the JS fallback of `search`: reads the candidate files and scans them with a
 * JavaScript regex. In a worker so a pathological pattern (catastrophic backtracking) can be cut
 * off by terminating the thread instead of freezing the bot. Plain JS (.mjs) so it loads without
 * a TypeScript loader. Protocol: workerData {pattern, files, contextLines, maxMatches} →
 * one message {files: [{abs, lines: [{line, text, match}], matches}], truncated}.
 */
import { promises as fs } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

const MAX_FILE_BYTES = 50 * 1024 * 1024;
const READ_BATCH = 32;

async function readSmall(abs) {
  try {
    const fh = await fs.open(abs, 'r');
    try {
      if ((await fh.stat()).size > MAX_FILE_BYTES) return null;
      return await fh.readFile();
    } finally {
      await fh.close();
    }
  } catch {
    return null;
  }
}

const stripCr = (t) => (t.endsWith('\r') ? t.slice(0, -1) : t);

async function scan({ pattern, files: candidates, contextLines, maxMatches }) {
  const re = new RegExp(pattern);
  const files = [];
  let total = 0;
  // Read in parallel batches (I/O bound), scan in order (so truncation is deterministic).
  for (let b = 0; b < candidates.length; b += READ_BATCH) {
    const batch = candidates.slice(b, b + READ_BATCH);
    const contents = await Promise.all(batch.map(readSmall));
    for (const [k, data] of contents.entries()) {
      if (!data || data.subarray(0, 8192).includes(0)) continue; // unreadable or binary, as rg skips it
      const lines = data.toString('utf8').split('\n');
      if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
      const hits = new Map();
      let matches = 0;
      for (let i = 0; i < lines.length; i++) {
        const text = stripCr(lines[i]);
        if (!re.test(text)) continue;
        matches++;
        // A line first added as context may match later: the match entry replaces it.
        hits.set(i + 1, { line: i + 1, text, match: true });
        for (let c = Math.max(0, i - contextLines); c <= Math.min(lines.length - 1, i + contextLines); c++) {
          if (!hits.has(c + 1)) hits.set(c + 1, { line: c + 1, text: stripCr(lines[c]), match: false });
        }
        if (++total >= maxMatches) break;
      }
      if (matches > 0) files.push({ abs: batch[k], lines: [...hits.values()], matches });
      if (total >= maxMatches) return { files, truncated: true };
    }
  }
  return { files, truncated: false };
}

parentPort.postMessage(await scan(workerData));
