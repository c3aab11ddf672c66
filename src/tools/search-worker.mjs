/**
 * Worker thread for the JS fallback of `search`: scans files with a JavaScript regex. In a worker
 * so a pathological pattern (catastrophic backtracking) can be cut off by terminating the thread
 * instead of freezing the bot. Plain JS (.mjs) so it loads without a TypeScript loader.
 * The files come as descriptors the confined walk opened (the thread shares the process's
 * descriptors and opens no path itself). Protocol: workerData {pattern, contextLines,
 * maxMatches}; each message {files: [{abs, fd}]} → one reply {files: [{abs, lines: [{line, text,
 * match}], matches}], truncated}, the match cap counted over every batch.
 */
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

const MAX_FILE_BYTES = 50 * 1024 * 1024;

const { pattern, contextLines, maxMatches } = workerData;
const re = new RegExp(pattern);
let total = 0;

function readSmall(fd) {
  try {
    if (fs.fstatSync(fd).size > MAX_FILE_BYTES) return null;
    return fs.readFileSync(fd);
  } catch {
    return null;
  }
}

const stripCr = (t) => (t.endsWith('\r') ? t.slice(0, -1) : t);

function scan(batch) {
  const files = [];
  for (const { abs, fd } of batch) {
    const data = readSmall(fd);
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
    if (matches > 0) files.push({ abs, lines: [...hits.values()], matches });
    if (total >= maxMatches) return { files, truncated: true };
  }
  return { files, truncated: false };
}

parentPort.on('message', (m) => parentPort.postMessage(scan(m.files)));
