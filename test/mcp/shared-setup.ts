/**
 * One harness and reference server shared by the tests of a describe block that run on the
 * default configuration: starting server-everything and a core costs seconds. It is started
 * before the tests (its start-up is not charged to the first test's time) and closed after them;
 * a test that fails on it drops it, so what that test left running (its chat, the model's unused
 * replies) is no other test's: the next one starts on a new setup.
 */
import { afterAll, beforeAll, onTestFailed } from 'vitest';
import type { Harness } from '../helpers/harness.js';

/** A running setup: the harness and, over HTTP, the server process. */
export interface McpSetup {
  harness: Harness;
  server?: { kill(): Promise<void> };
}

/** Register the shared setup's hooks; `take()` (in a test) gives the setup, started anew if dropped. */
export function sharedSetup<S extends McpSetup>(open: () => Promise<S>): { take(): Promise<S> } {
  let shared: S | undefined;
  const close = async () => {
    const s = shared;
    shared = undefined;
    await s?.harness.close();
    await s?.server?.kill();
  };
  beforeAll(async () => {
    shared = await open();
  });
  afterAll(close);
  return {
    async take() {
      shared ??= await open();
      onTestFailed(close);
      return shared;
    },
  };
}
