/** `npm run bench`: every benchmark in turn; each prints its own figures. */
import { run as runCore } from './core.js';
import { run as runFailover } from './failover.js';
import { run as runJobs } from './jobs.js';
import { run as runMcp } from './mcp.js';
import { run as runModel } from './model.js';
import { run as runReadFile } from './read-file.js';
import { run as runScale } from './scale.js';
import { run as runSearch } from './search.js';
import { run as runStartup } from './startup.js';
import { run as runTelegram } from './telegram.js';

for (const [name, run] of [
  ['core', runCore],
  ['telegram', runTelegram],
  ['startup', runStartup],
  ['search', runSearch],
  ['read_file', runReadFile],
  ['jobs', runJobs],
  ['mcp', runMcp],
  ['model', runModel],
  ['scale', runScale],
  ['failover', runFailover],
] as const) {
  try {
    await run();
  } catch (err) {
    console.error(`benchmark ${name} failed: ${(err as Error).message}`);
    process.exitCode = 1;
  }
}
