/**
 * The order test files start in: longest first. With three workers, a long file that starts
 * late keeps one worker busy after the others ran out of files; started early, it runs beside
 * the many short ones. The times come from `test/durations.json` (seconds per file, from a whole
 * run), not from vitest's cache of the last run, so the order is the same on every machine, in CI
 * from a fresh clone too. A file the list does not know (a new one) starts before the known ones,
 * as vitest does with files it has no time for: it may be long. Ties go by path.
 *
 * Refresh the list after a change that moves files' times much:
 * `npx vitest run --reporter=json --outputFile=/tmp/vitest.json && node scripts/test-durations.mjs /tmp/vitest.json`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds each file took in a whole run, by its path from the repository's root. */
const durations: Record<string, number> = JSON.parse(
  readFileSync(new URL('./durations.json', import.meta.url), 'utf8'),
);

/** Runs the longest files first (see the module's note); sharding stays vitest's. */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const keyed = files.map((spec) => {
      const file = path.relative(spec.project.config.root, spec.moduleId).split(path.sep).join('/');
      return { spec, file, seconds: durations[file] ?? Number.POSITIVE_INFINITY };
    });
    keyed.sort((a, b) => b.seconds - a.seconds || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
    return keyed.map((k) => k.spec);
  }
}
