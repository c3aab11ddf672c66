import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Before each file: its own PostgreSQL database on the PostgreSQL half (test/helpers/test-db.ts).
    setupFiles: ['test/setup/file-database.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // The default summary, then every skipped test with its reason (test/reporters/skips.ts).
    reporters: ['default', './test/reporters/skips.ts'],
    pool: 'forks',
    // One module graph per worker, not per file: importing the sources anew for each of 200 files
    // cost 239 s of the suite's 1 286 s (2026-12-02); shared, it is about 25 s. What a file leaves in
    // module state is reset where it matters (the probes' reset functions, the tests that change
    // process.env put it back, the per-file database made by a setup file, which runs before every
    // file, not by a helper's top level, which runs once per worker); a test that depends on a fresh
    // module must say so and reset it.
    isolate: false,
    // Two cores: more workers only add contention for the emulators' loopback servers.
    maxWorkers: 2,
  },
});
