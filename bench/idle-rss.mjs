/**
 * Child process of the core benchmark: start a core over a database that already holds 10 000
 * idle conversations and print its resident memory in MB. Plain JavaScript over the compiled
 * build (`dist/src`, made by `scripts/build.mjs`): the process is what `npm start` runs, without
 * the TypeScript loader the rest of the benchmark uses (about 50 MB of its own).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { defaultToolset } from '../dist/src/compose.js';
import { configSchema } from '../dist/src/config.js';
import { Core } from '../dist/src/core/core.js';

const [dir, llmUrl] = process.argv.slice(2);
mkdirSync(path.join(dir, 'ws'), { recursive: true });
const config = configSchema.parse({
  llm: { base_url: llmUrl, api_key: 'k' },
  store: { database_url: `sqlite:${path.join(dir, 'bench.db')}` },
  workspace: { root: path.join(dir, 'ws') },
  log: { level: 'silent' },
});
/** @type {import('../src/core/channel.js').Channel} */
const channel = {
  name: 'bench',
  capabilities: new Set(),
  start: async () => {},
  stop: async () => {},
  print: async () => {},
};
const core = await Core.open({ config, ...defaultToolset(config) });
core.addChannel(channel);
await core.start();
await core.idle();
const count = await core.db
  .selectFrom('conversations')
  .select((eb) => eb.fn.countAll().as('n'))
  .executeTakeFirstOrThrow();
global.gc?.();
process.stdout.write(
  `${JSON.stringify({ rssMb: process.memoryUsage().rss / 1024 / 1024, conversations: Number(count.n) })}\n`,
);
await core.close();
