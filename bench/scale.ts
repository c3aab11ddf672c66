/**
 * Scale-out benchmark: 100 chats, 5 messages each (the next sent when the previous turn is done),
 * answered by 1, 2 and 3 cores over one PostgreSQL database (`BENCH_DATABASE_URL`), and by one core
 * over SQLite for comparison. Messages enter through the cores in turn; the turn runs wherever its
 * conversation's lease lands. The model is the scripted server with `BENCH_MODEL_DELAY_MS` (default
 * 20) of latency per answer. All cores share this one Node process, so the figures show what the
 * store and the leases cost, not what a second machine would add. Prints figures; asserts nothing.
 *
 *   BENCH_DATABASE_URL=postgres://user@127.0.0.1:5432/db npm run bench
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { defaultToolset } from '../src/compose.js';
import { configSchema } from '../src/config.js';
import type { Channel } from '../src/contract/channel.js';
import { Core } from '../src/core/core.js';
import { startScriptedLlm } from '../test/emulators/llm.js';

class NullChannel implements Channel {
  readonly name = 'bench';
  readonly capabilities = new Set<never>();
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async print(): Promise<void> {}
}

const CHATS = 100;
const PER_CHAT = 5;

async function measure(
  label: string,
  databaseUrl: string,
  instances: number,
  llmUrl: string,
  dir: string,
): Promise<void> {
  const config = configSchema.parse({
    llm: { base_url: llmUrl, api_key: 'k', model: 'bench', max_retries: 0 },
    store: { database_url: databaseUrl, pool_size: 10 },
    workspace: { root: path.join(dir, 'ws') },
    access: { allowed_users: ['bench:u'], rate_limit_per_minute: 1_000_000 },
    log: { level: 'silent' },
  });
  const cores: Core[] = [];
  for (let i = 0; i < instances; i++) {
    const core = await Core.open({ config, ...defaultToolset(config) });
    core.addChannel(new NullChannel());
    await core.start();
    cores.push(core);
  }
  // Turns finished per conversation; a chat sends its next message once its count went up.
  const doneCount = new Map<string, number>();
  const wakeups = new Set<() => void>();
  const turnsBy = cores.map(() => 0);
  for (const [i, core] of cores.entries()) {
    core.subscribe((conversationId, event) => {
      if (event.type !== 'turn_done') return;
      turnsBy[i] = (turnsBy[i] ?? 0) + 1;
      doneCount.set(conversationId, (doneCount.get(conversationId) ?? 0) + 1);
      for (const w of wakeups) w();
    });
  }
  const until = (check: () => boolean) =>
    new Promise<void>((resolve) => {
      if (check()) return resolve();
      const w = () => {
        if (!check()) return;
        wakeups.delete(w);
        resolve();
      };
      wakeups.add(w);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CHATS }, async (_, chat) => {
      for (let n = 0; n < PER_CHAT; n++) {
        const core = cores[(chat + n) % cores.length] as Core;
        const r = await core.submit({ channel: 'bench', chatKey: `c${chat}`, userId: 'u', text: `m${n}` });
        if (r.status !== 'queued') throw new Error(`submit: ${r.status}`);
        await until(() => (doneCount.get(r.conversationId) ?? 0) > n);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const c of cores) await c.idle();
  const turns = CHATS * PER_CHAT;
  console.log(
    `scale  ${label.padEnd(22)} ${instances} instance(s): ${turns} turns in ${seconds.toFixed(2)} s = ${(turns / seconds).toFixed(0)} turns/s; turns run per instance ${turnsBy.join('/')}`,
  );
  for (const c of cores) await c.close();
}

/** Run the scale-out benchmark and print its figures. */
export async function run(): Promise<void> {
  const pgUrl = process.env.BENCH_DATABASE_URL;
  const delay = Number(process.env.BENCH_MODEL_DELAY_MS ?? 20);
  const llm = await startScriptedLlm();
  llm.setHandler(() => ({ text: 'ok', delayMs: delay }));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-bench-scale-'));
  mkdirSync(path.join(dir, 'ws'));
  try {
    await measure('SQLite', `sqlite:${path.join(dir, 'bench.db')}`, 1, llm.url, dir);
    if (!pgUrl) {
      console.log('scale  PostgreSQL figures skipped: set BENCH_DATABASE_URL=postgres://…');
      return;
    }
    for (const instances of [1, 2, 3]) {
      // A fresh schema per run, so every run starts from an empty database.
      const schema = `bench_${process.pid}_${instances}`;
      const admin = new pg.Client({ connectionString: pgUrl });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      const u = new URL(pgUrl);
      u.searchParams.set('options', `-c search_path=${schema}`);
      try {
        await measure('PostgreSQL', u.toString(), instances, llm.url, dir);
      } finally {
        await admin.query(`DROP SCHEMA ${schema} CASCADE`);
        await admin.end();
      }
    }
  } finally {
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
