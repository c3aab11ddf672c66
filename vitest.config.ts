import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Before each file: the test tools' counts from zero, and its own database on the PostgreSQL half.
    setupFiles: ['test/setup/per-file.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // The default summary, then every skipped test with its reason (test/reporters/skips.ts).
    reporters: ['default', './test/reporters/skips.ts'],
    pool: 'forks',
    // One module graph per worker, not per file: importing the sources anew for each of 200 files
    // cost 239 s of the suite's 1 286 s (2026-12-02); shared, it is about 16 s. What a file leaves
    // in module state is reset where it matters: the probes have reset functions, tests that change
    // process.env put it back, and a setup file (which runs before every file; a helper's top level
    // runs once per worker) zeroes the test tools' counts and makes the PostgreSQL database. A test
    // that depends on a fresh module must say so and reset it.
    isolate: false,
    // Three on two cores: much of a test's time is spent waiting on child processes, emulators and
    // timers, so a third worker fills the gaps (npm test 5 min 20 s against 6 min 38 s with two,
    // 2026-12-03); tests wait on events, and the contention suite shows they hold on a busy machine.
    maxWorkers: 3,
    // Longest files first, by the times in test/durations.json: a long file started last would
    // leave the other workers idle at the end of the run (test/sequencer.ts).
    sequence: { sequencer: LongestFirst },
  },
});
