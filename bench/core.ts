/**
 * Core benchmark against the scripted model on loopback with zero model latency:
 * - the bare HTTP round trip of one streamed completion (fetch, body read to the end);
 * - per-turn latency through the core (submit → turn_done; ten turns per conversation, after 300
 *   warm-up turns), and the latency the core adds over the bare round trip (Node's fetch and the
 *   model client's own HTTP client, the faster counts);
 * - turns per second with 100 concurrent conversations (three rounds after a warm-up round);
 * - RSS with 10 000 idle conversations stored (a fresh core started over them).
 * Prints figures; asserts nothing.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Channel } from '../src/contract/channel.js';
import { configSchema } from '../src/config.js';
import { Core } from '../src/core/core.js';
import { defaultToolset } from '../src/compose.js';
import { modelFetch } from '../src/core/model-fetch.js';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

class NullChannel implements Channel {
  readonly name = 'bench';
  readonly capabilities = new Set<never>();
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async print(): Promise<void> {}
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}
const ms = (n: number) => `${n.toFixed(2)} ms`;

async function openCore(dir: string, llmUrl: string): Promise<Core> {
  mkdirSync(path.join(dir, 'ws'), { recursive: true });
  const config = configSchema.parse({
    llm: { base_url: llmUrl, api_key: 'k', model: 'bench', max_retries: 0 },
    store: { database_url: `sqlite:${path.join(dir, 'bench.db')}` },
    workspace: { root: path.join(dir, 'ws') },
    // The per-user flood limit would throttle the benchmark's own traffic.
    access: { allowed_users: Array.from({ length: 100 }, (_, i) => `bench:u${i}`), rate_limit_per_minute: 1_000_000 },
    log: { level: 'silent' },
  });
  const core = await Core.open({ config, ...defaultToolset(config) });
  core.addChannel(new NullChannel());
  await core.start();
  return core;
}

/** Run the core benchmark and print its figures. */
export async function run(): Promise<void> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  // The memory figure is taken of the compiled build, as `npm start` runs it.
  if (
    spawnSync(process.execPath, [path.join(here, '../scripts/build.mjs'), '--if-stale'], { stdio: 'inherit' })
      .status !== 0
  )
    throw new Error('build failed');
  const server = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'llm-process.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [firstLine] = (await once(createInterface({ input: server.stdout }), 'line')) as [string];
  const llm = { url: firstLine.trim() };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-bench-'));
  try {
    const core = await openCore(dir, llm.url);
    const waiters = new Map<string, () => void>();
    core.subscribe((conversationId, event) => {
      if (event.type === 'turn_done') waiters.get(conversationId)?.();
    });
    /** One turn: submit, then wait for turn_done of that conversation; returns milliseconds. */
    // A chat's conversation, looked up once: the look-up is the benchmark's, not part of a turn.
    const conversations = new Map<string, string>();
    const conversationOf = async (chat: string) => {
      const known = conversations.get(chat);
      if (known) return { id: known };
      const conv = await core.findConversation({ channel: 'bench', chatKey: chat });
      if (conv) conversations.set(chat, conv.id);
      return conv;
    };
    const timedTurn = async (user: number, chat: string) => {
      const conv = await conversationOf(chat);
      // Register the waiter before submitting: the turn may finish before submit returns.
      // A new conversation has no id yet, so its first turn waits for the core to go idle.
      const done = conv ? new Promise<void>((resolve) => waiters.set(conv.id, resolve)) : null;
      const t = performance.now();
      const r = await core.submit({ channel: 'bench', chatKey: chat, userId: `u${user}`, text: 'hello' });
      if (r.status !== 'queued') throw new Error(`unexpected ${r.status}`);
      await (done ?? core.idle());
      return performance.now() - t;
    };

    const latency: number[] = [];
    // Ten turns per conversation, as in a chat; one ever-growing conversation would measure the
    // history it sends, not the core. The first 300 turns warm the process up (JIT, caches), as
    // the bare round trip below is measured in a warm process: a bot runs for days.
    for (let i = 0; i < 600; i++) {
      const d = await timedTurn(0, `latency-${Math.floor(i / 10)}`);
      if (i >= 300) latency.push(d);
    }

    // Throughput: 100 conversations, each 10 turns one after another, all conversations at once;
    // one warm-up round (JIT, caches, the database file growing), then three measured rounds.
    const perConv = 10;
    for (let c = 0; c < 100; c++) await timedTurn(c, `tp-${c}`); // create the conversations first
    const rates: number[] = [];
    for (let round = 0; round < 4; round++) {
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: 100 }, async (_, c) => {
          for (let k = 0; k < perConv; k++) await timedTurn(c, `tp-${c}`);
        }),
      );
      if (round > 0) rates.push((100 * perConv) / ((performance.now() - t0) / 1000));
    }
    // Bare round trip, with a request body like the core's (same tools), so the difference is
    // what the core itself adds: database, engine, event fan-out.
    const body = JSON.stringify({
      model: 'bench',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: core.config.llm.system_prompt },
        { role: 'user', content: 'hello' },
      ],
      tools: core.registry.all().map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      })),
    });
    // Twice: with Node's fetch, and with the HTTP client the core's model client runs on
    // (src/core/model-fetch.ts); the core's added time is taken against the faster of the two.
    const bareWith = async (client: typeof fetch) => {
      const times: number[] = [];
      for (let i = 0; i < 300; i++) {
        const t = performance.now();
        const res = await client(`${llm.url}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        await res.text();
        if (i >= 50) times.push(performance.now() - t);
      }
      return times;
    };
    const bareFetch = await bareWith(fetch);
    const bareModelFetch = await bareWith(modelFetch);
    const bare = pct(bareModelFetch, 50) <= pct(bareFetch, 50) ? bareModelFetch : bareFetch;

    // Honest figures: every timed turn must have been a real, completed model round trip.
    const outcomes = await core.db
      .selectFrom('turns')
      .select(['status', core.db.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    const notDone = outcomes.filter((o) => o.status !== 'done');
    if (notDone.length) throw new Error(`turns that did not finish as done: ${JSON.stringify(notDone)}`);
    await core.close();

    // 10 000 idle conversations stored, then a fresh core over them.
    const db = (await openCore(dir, llm.url)).db;
    const now = Date.now();
    for (let start = 0; start < 10_000; start += 500) {
      await db
        .insertInto('conversations')
        .values(
          Array.from({ length: 500 }, (_, i) => ({
            id: `idle-${start + i}`,
            channel: 'bench',
            chat_key: `idle-${start + i}`,
            thread_key: '',
            owner_id: 'bench:u0',
            model: null,
            scratchpad: null,
            archived: 0,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute();
    }
    await db.destroy();
    /** RSS of a fresh process that starts a core over the database in `folder`. */
    const freshRss = (folder: string) =>
      JSON.parse(
        execFileSync(process.execPath, ['--expose-gc', path.join(here, 'idle-rss.mjs'), folder, llm.url], {
          encoding: 'utf8',
        }),
      ) as { rssMb: number; conversations: number };
    const idle = freshRss(dir);
    const rss = idle.rssMb;
    // The same over an empty database: what the runtime itself takes.
    const emptyDir = mkdtempSync(path.join(os.tmpdir(), 'sb-bench-empty-'));
    const empty = freshRss(emptyDir);
    rmSync(emptyDir, { recursive: true, force: true });

    const p50 = pct(latency, 50);
    const p99 = pct(latency, 99);
    console.log('core');
    console.log(
      `  bare HTTP round trip      p50 ${ms(pct(bareFetch, 50))}  p99 ${ms(pct(bareFetch, 99))} (Node's fetch)`,
    );
    console.log(
      `                            p50 ${ms(pct(bareModelFetch, 50))}  p99 ${ms(pct(bareModelFetch, 99))} (the model client's HTTP)`,
    );
    console.log(`  turn through the core     p50 ${ms(p50)}  p99 ${ms(p99)}`);
    console.log(
      `  added by the core         p50 ${ms(p50 - pct(bare, 50))}  p99 ${ms(p99 - pct(bare, 99))} (against the faster round trip)`,
    );
    console.log(
      `  throughput                ${pct(rates, 50).toFixed(0)} [${Math.min(...rates).toFixed(0)}–${Math.max(...rates).toFixed(0)}] turns/s (100 concurrent conversations; median [min–max] of 3 rounds after a warm-up round)`,
    );
    console.log(
      `  RSS of a fresh process (compiled build), ${idle.conversations} idle conversations stored: ${rss.toFixed(0)} MB (empty database: ${empty.rssMb.toFixed(0)} MB)`,
    );
  } finally {
    server.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await run();
