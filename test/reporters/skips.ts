/**
 * A vitest reporter that names every skipped test and why, at the end of the run (after the
 * default reporter's summary), so a green run never hides what did not run.
 *
 * The reason is the note given to `ctx.skip(note)`, else the `(skipped: …)` a suite or test
 * carries in its name (see `skipped()` in test/helpers/skips.ts), else "no reason given" (a
 * defect to fix). With `SWITCHBOARD_TEST_SKIPS=FILE` the list (and the number of errors outside
 * tests) is also written to FILE as JSON: `.ci/run` reads it to fail on a skip CI should not have.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, SerializedError, TestCase, TestModule } from 'vitest/node';

/** One skipped test. */
export interface SkippedTest {
  file: string;
  name: string;
  reason: string;
}

/** The reason a skipped test carries: its note, else a `(skipped: …)` in its own or a suite's name. */
function reasonOf(test: TestCase): string {
  const result = test.result();
  if (result.state === 'skipped' && result.note) return result.note;
  const found = /\(skipped: ([^)]*)\)/.exec(test.fullName);
  if (found?.[1]) return found[1];
  return test.options.mode === 'todo' ? 'marked todo' : 'no reason given';
}

/** Prints the skipped tests, one line each, with their reasons. */
export default class SkipsReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const skipped: SkippedTest[] = [];
    for (const mod of testModules) {
      for (const test of mod.children.allTests('skipped')) {
        skipped.push({
          file: path.relative(process.cwd(), mod.moduleId),
          name: test.fullName.replace(/ \(skipped: [^)]*\)/g, ''),
          reason: reasonOf(test),
        });
      }
    }
    const out = process.env.SWITCHBOARD_TEST_SKIPS;
    if (out) writeFileSync(out, JSON.stringify({ skipped, unhandledErrors: unhandledErrors.length }));
    if (skipped.length === 0) {
      process.stdout.write('\nNo test was skipped.\n');
      return;
    }
    const lines = skipped.map((s) => `  ${s.file} > ${s.name}\n      ${s.reason}`);
    process.stdout.write(`\n${skipped.length} skipped (each with its reason):\n${lines.join('\n')}\n`);
  }
}
