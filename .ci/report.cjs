#!/usr/bin/env node
// Reads vitest JSON reports (and the skip reporter's list) for .ci/run.
//
//   report.cjs failed-files REPORT
//       the test files with a failed test, one per line
//   report.cjs count LABEL SKIPS REPORT STATUS [RERUN RERUN_STATUS]
//       prints each skipped test with its reason, each failure of REPORT (and whether it passed
//       when its file ran again in RERUN), then "PASSED FAILED SKIPPED" as the last line
//   report.cjs tail < SUMMARIES
//       the summaries of every half, reordered for the end of the log: each skipped test once,
//       with the halves that skipped it, then every failure and FLAKY test last, where a reader
//       of the log's tail (CI shows only its end) finds them
//
// STATUS is vitest's exit status. A run that exited non-zero without a failed test (an unhandled
// error, a crash before the report) is one failure; so is a report that is missing or
// unreadable: a run that did not finish must not read as green. SKIPS (written by
// test/reporters/skips.ts) also counts the errors outside tests: those fail even when the files
// with failed tests pass when run again. A test skipped because a tool
// is not installed is a failure too: .ci/run installs every one of them.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

function load(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

function failedTests(report) {
  const out = [];
  for (const file of report.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      if (test.status === 'failed') out.push({ file: file.name, name: test.fullName, messages: test.failureMessages ?? [] });
    }
    // A file that failed to load has no assertion results, only a message.
    if ((file.assertionResults ?? []).length === 0 && file.status === 'failed') {
      out.push({ file: file.name, name: '(the file itself)', messages: [file.message ?? ''] });
    }
  }
  return out;
}

function statusIn(report, failure) {
  if (!report) return 'missing';
  for (const file of report.testResults ?? []) {
    if (file.name !== failure.file) continue;
    for (const test of file.assertionResults ?? []) if (test.fullName === failure.name) return test.status;
    if (failure.name === '(the file itself)') return file.status === 'passed' ? 'passed' : file.status;
  }
  return 'missing';
}

/** Skip reasons that mean a tool .ci/run installs was missing (test/helpers/system-tools.ts). */
const missingTool = / is not installed: /;

const [command, ...args] = process.argv.slice(2);
if (command === 'failed-files') {
  const report = load(args[0]);
  if (report) for (const file of new Set(failedTests(report).map((f) => f.file))) console.log(file);
} else if (command === 'count') {
  const [label, skipsFile, firstFile, firstStatus, rerunFile, rerunStatus] = args;
  const first = load(firstFile);
  if (!first) {
    console.log(`${label} FAILED: no report (vitest exited ${firstStatus} before writing one; see its output above)`);
    console.log('0 1 0');
    process.exit(0);
  }
  const extra = load(skipsFile);
  const skips = extra?.skipped ?? [];
  let failed = 0;
  if (extra && extra.unhandledErrors > 0) {
    console.log(`${label} FAILED: ${extra.unhandledErrors} error(s) outside the tests (see "Unhandled Errors" above)`);
    failed += extra.unhandledErrors;
  }
  if (skips.length > 0) console.log(`${label}: ${skips.length} skipped:`);
  for (const s of skips) {
    const wrong = missingTool.test(s.reason);
    if (wrong) failed++;
    console.log(`${label} ${wrong ? 'SKIPPED IN CI (a failure: .ci/run installs the tool)' : 'skipped'}: ${s.file} > ${s.name}\n    ${s.reason}`);
  }
  const rerun = rerunFile ? load(rerunFile) : null;
  let recovered = 0;
  let failedTestCount = 0;
  for (const failure of failedTests(first)) {
    const again = rerunFile ? statusIn(rerun, failure) : 'not run again';
    if (again === 'passed') recovered++;
    else failedTestCount++;
    const where = path.relative(process.cwd(), failure.file);
    const verdict = again === 'passed' ? 'FLAKY (failed, then passed when its file ran again)' : `FAILED (run again: ${again})`;
    console.log(`${label} ${verdict}: ${where} > ${failure.name}`);
    const lines = failure.messages.join('\n').split('\n').filter((l) => !l.includes('node_modules') && !l.includes('(<anonymous>)'));
    const message = lines.slice(0, 12).join('\n');
    if (message) console.log(message.replace(/^/gm, '    '));
  }
  failed += failedTestCount;
  // vitest's exit status covers what the report's counts do not: unhandled errors, a crashed worker.
  if (Number(firstStatus) !== 0 && failedTestCount === 0 && recovered === 0 && !(extra?.unhandledErrors > 0)) {
    console.log(`${label} FAILED: vitest exited ${firstStatus} without a failed test (an error outside the tests; see "Unhandled Errors" above)`);
    failed++;
  }
  if (rerunFile && Number(rerunStatus) !== 0 && failedTestCount === 0) {
    console.log(`${label} FAILED: the second run exited ${rerunStatus} though its tests passed (an error outside the tests; see above)`);
    failed++;
  }
  if (recovered > 0) console.log(`${label}: ${recovered} FLAKY (counted as passed, named above: fix them)`);
  const skipped = (first.numPendingTests ?? 0) + (first.numTodoTests ?? 0);
  console.log(`${first.numPassedTests + recovered} ${failed} ${skipped}`);
} else if (command === 'tail') {
  // Blocks: a line that is not indented, with the indented lines under it.
  const blocks = [];
  for (const line of fs.readFileSync(0, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    if (/^\s/.test(line) && blocks.length > 0) blocks.at(-1).push(line);
    else blocks.push([line]);
  }
  const skips = new Map();
  const others = [];
  for (const block of blocks) {
    const skip = /^(.+?) skipped: (.+)$/.exec(block[0]);
    if (/^.+: \d+ skipped:$/.test(block[0])) continue;
    if (!skip) {
      others.push(block);
      continue;
    }
    const key = [skip[2], ...block.slice(1)].join('\n');
    const labels = skips.get(key) ?? [];
    labels.push(skip[1]);
    skips.set(key, labels);
  }
  for (const [key, labels] of skips) {
    const [test, ...reason] = key.split('\n');
    console.log([`skipped (${labels.join('; ')}): ${test}`, ...reason].join('\n'));
  }
  for (const block of others) console.log(block.join('\n'));
} else {
  console.error('usage: report.cjs failed-files REPORT | tail | count LABEL SKIPS REPORT STATUS [RERUN RERUN_STATUS]');
  process.exit(2);
}
