/**
 * A real switchboard with its web chat on 127.0.0.1 over a scripted model, in a temporary folder:
 * what the web tests that talk HTTP to the server start in `beforeAll`.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { type App, startServer } from '../../src/main.js';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { testConfig } from './harness.js';

/** A started web chat and what it runs on. */
export interface WebApp {
  app: App;
  llm: ScriptedLlm;
  dir: string;
  /** `http://127.0.0.1:<port>`. */
  base: string;
  close(): Promise<void>;
}

/** Start the server (web chat on) in a new folder named after `prefix`. */
export async function startWebApp(prefix: string): Promise<WebApp> {
  const llm = await startScriptedLlm();
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  mkdirSync(path.join(dir, 'workspace'));
  const app = await startServer(testConfig(dir, llm.url), pino({ level: 'silent' }));
  if (!app?.signIn) throw new Error('the web chat did not start');
  return {
    app,
    llm,
    dir,
    base: `http://127.0.0.1:${app.port}`,
    async close() {
      await app.close();
      await llm.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    },
  };
}
