/**
 * Child process of the core benchmark: start a core over a database that already holds 10 000
 * idle conversations and print its resident memory in MB.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Channel } from '../src/core/channel.js';
import { defaultToolset } from '../src/compose.js';
import { configSchema } from '../src/config.js';
import { Core } from '../src/core/core.js';

const [dir, llmUrl] = process.argv.slice(2) as [string, string];
mkdirSync(path.join(dir, 'ws'), { recursive: true });
const config = configSchema.parse({
  llm: { base_url: llmUrl, api_key: 'k' },
  store: { database_url: `sqlite:${path.join(dir, 'bench.db')}` },
  workspace: { root: path.join(dir, 'ws') },
  log: { level: 'silent' },
});
const channel: Channel = {
  name: 'bench',
  capabilities: new Set(),
  start: async () => {},
  stop: async () => {},
  deliver: async () => {},
};
const core = await Core.open({ config, ...defaultToolset(config) });
core.addChannel(channel);
await core.start();
await core.idle();
const count = await core.db.selectFrom('conversations').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
global.gc?.();
process.stdout.write(`${JSON.stringify({ rssMb: process.memoryUsage().rss / 1024 / 1024, conversations: Number(count.n) })}\n`);
await core.close();
