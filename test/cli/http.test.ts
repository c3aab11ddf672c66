import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../src/main.js';
import { testConfig } from '../helpers/harness.js';

// /healthz and /metrics with a running channel are covered in test/slack/main.test.ts.
describe('switchboard start without a platform channel and with the web chat off', () => {
  it('returns null so the CLI opens the console chat, and opens nothing', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-http-'));
    try {
      expect(
        await startServer(
          testConfig(dir, 'http://127.0.0.1:9/v1', { web: { enabled: false } }),
          pino({ level: 'silent' }),
        ),
      ).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    }
  });
});
