#!/usr/bin/env node
/**
 * Writes test/durations.json (seconds per test file, the order test/sequencer.ts starts them in)
 * from a vitest JSON report of a whole run: `node scripts/test-durations.mjs REPORT.json`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const [report] = process.argv.slice(2);
if (!report) {
  console.error('usage: node scripts/test-durations.mjs REPORT.json (from vitest run --reporter=json --outputFile=…)');
  process.exit(2);
}
const root = path.resolve(import.meta.dirname, '..');
const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
const rows = testResults
  .map((r) => [path.relative(root, r.name).split(path.sep).join('/'), Math.round((r.endTime - r.startTime) / 100) / 10])
  .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
const out = path.join(root, 'test', 'durations.json');
writeFileSync(out, `${JSON.stringify(Object.fromEntries(rows), null, 2)}\n`);
console.log(`${out}: ${rows.length} files`);
