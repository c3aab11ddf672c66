#!/usr/bin/env node
// Reads vitest JSON reports for .ci/run.
//
//   report.cjs failed-files FIRST          the test files with a failed test, one per line
//   report.cjs count LABEL FIRST [RERUN]   prints each failure of FIRST (and whether it passed when
//                                          its file ran again in RERUN), then "PASSED FAILED"
//                                          as the last line
//
// A report that is missing or unreadable counts as one failure: a run that crashed before
// writing its report must not read as green.
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
  }
  return 'missing';
}

const [command, ...args] = process.argv.slice(2);
if (command === 'failed-files') {
  const report = load(args[0]);
  if (report) for (const file of new Set(failedTests(report).map((f) => f.file))) console.log(file);
} else if (command === 'count') {
  const [label, firstFile, rerunFile] = args;
  const first = load(firstFile);
  if (!first) {
    console.log(`${label}: no report (the run did not finish)`);
    console.log('0 1');
    process.exit(0);
  }
  const rerun = rerunFile ? load(rerunFile) : null;
  let recovered = 0;
  let failed = 0;
  for (const failure of failedTests(first)) {
    const again = rerunFile ? statusIn(rerun, failure) : 'not run again';
    if (again === 'passed') recovered++;
    else failed++;
    const where = path.relative(process.cwd(), failure.file);
    const verdict = again === 'passed' ? 'FLAKY (failed, then passed when its file ran again)' : `FAILED (run again: ${again})`;
    console.log(`${label} ${verdict}: ${where} > ${failure.name}`);
    const lines = failure.messages.join('\n').split('\n').filter((l) => !l.includes('node_modules') && !l.includes('(<anonymous>)'));
    const message = lines.slice(0, 12).join('\n');
    if (message) console.log(message.replace(/^/gm, '    '));
  }
  // A run that failed without a failed test (an error outside tests) is one failure.
  if (failed === 0 && recovered === 0 && !first.success) failed = 1;
  console.log(`${first.numPassedTests + recovered} ${failed}`);
} else {
  console.error('usage: report.cjs failed-files REPORT | count LABEL REPORT [RERUN]');
  process.exit(2);
}
