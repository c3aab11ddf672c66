import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // The default summary, then every skipped test with its reason (test/reporters/skips.ts).
    reporters: ['default', './test/reporters/skips.ts'],
    pool: 'forks',
    // Two cores: more workers only add contention for the emulators' loopback servers.
    maxWorkers: 2,
  },
});
