/**
 * Jobs benchmark: 1 000 jobs due at the same instant, reporting to 100 Telegram chats (10 each),
 * through the real core, job service and Telegram channel against the Bot API emulator, with the
 * scripted model in its own process. Prints:
 * - how long after the due instant runs started (p50 / p95 / max) and the most runs at once;
 * - when the last run finished and the last report was delivered;
 * - delivery pacing: the most messages one chat got in any second, the most the bot sent in any
 *   second, and 429s seen;
 * - the idle cost with 10 000 jobs stored: scheduler wake-ups and the due look-up time.
 * The model server and the Telegram emulator run in processes of their own.
 * Asserts nothing. Run alone: `node --import tsx bench/jobs.ts`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { TelegramChannel } from '../src/channels/telegram/index.js';
import { defaultToolset } from '../src/compose.js';
import { configSchema } from '../src/config.js';
import { Core } from '../src/core/core.js';
import { HttpServer } from '../src/http/server.js';
import { JobService } from '../src/jobs/service.js';
import { ensureConversation } from '../src/store/repos/conversations.js';
import { earliestDue, insertJob } from '../src/store/repos/jobs.js';

const JOBS = 1_000;
const CHATS = 100;
const IDLE_JOBS = 10_000;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}

/** Most events inside any window of `ms`. */
function maxInWindow(times: number[], ms: number): number {
  const s = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < s.length; i++) {
    while ((s[j] as number) <= (s[i] as number) - ms) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('benchmark timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Run the jobs benchmark and print its figures. */
export async function run(): Promise<void> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const server = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'llm-process.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [firstLine] = (await once(createInterface({ input: server.stdout }), 'line')) as [string];
  const tg = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'telegram-process.ts')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const tgLines = createInterface({ input: tg.stdout });
  const [tgFirst] = (await once(tgLines, 'line')) as [string];
  const [apiRoot, token] = tgFirst.trim().split(' ') as [string, string];
  const emuCalls = async (): Promise<
    Array<{ method: string; chat: string; ok: boolean; at: number; report: boolean }>
  > => {
    const answer = once(tgLines, 'line');
    tg.stdin.write('calls\n');
    const [line] = (await answer) as [string];
    return JSON.parse(line);
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-bench-jobs-'));
  mkdirSync(path.join(dir, 'ws'));
  const log = pino({ level: 'silent' });
  const config = configSchema.parse({
    llm: { base_url: firstLine.trim(), api_key: 'k', model: 'bench', max_retries: 0 },
    store: { database_url: `sqlite:${path.join(dir, 'bench.db')}` },
    workspace: { root: path.join(dir, 'ws') },
    telegram: { bot_token: token, api_root: apiRoot },
    log: { level: 'silent' },
  });
  const toolset = defaultToolset(config);
  const core = await Core.open({ config, log, ...toolset });
  const channel = new TelegramChannel({ config, http: new HttpServer(log), log, paths: core.paths });
  core.addChannel(channel);
  try {
    const convs: string[] = [];
    for (let c = 0; c < CHATS; c++) {
      convs.push(
        (
          await ensureConversation(
            core.db,
            { channel: 'telegram', chatKey: String(10_000 + c), threadKey: '' },
            `telegram:${10_000 + c}`,
          )
        ).id,
      );
    }
    const due = Date.now() + 3_000;
    await core.db.transaction().execute(async (trx) => {
      for (let i = 0; i < JOBS; i++) {
        await insertJob(trx, {
          id: `bench${String(i).padStart(3, '0')}`,
          name: `job ${i}`,
          owner_id: `telegram:${10_000 + (i % CHATS)}`,
          report_conversation_id: convs[i % CHATS] as string,
          prompt: 'report',
          cron: null,
          run_at: due,
          timezone: 'UTC',
          next_run_at: due,
        });
      }
    });
    await core.start();
    const service = JobService.of(core) as JobService;
    let maxRunning = 0;
    const sampler = setInterval(() => {
      maxRunning = Math.max(maxRunning, service.running);
    }, 5);
    await waitUntil(
      async () =>
        (await core.db.selectFrom('job_runs').select('status').where('status', '!=', 'running').execute()).length >=
        JOBS,
      600_000,
    );
    const lastRunDone = Date.now();
    clearInterval(sampler);
    const reports = async () => (await emuCalls()).filter((c) => c.method === 'sendMessage' && c.ok && c.report);
    let sends = await reports();
    while (sends.length < JOBS) {
      await new Promise((r) => setTimeout(r, 250));
      sends = await reports();
    }
    const runs = await core.db.selectFrom('job_runs').selectAll().execute();
    const startDelays = runs.map((r) => Number(r.started_at) - Number(r.scheduled_at));
    const times = sends.map((c) => c.at);
    const perChat = new Map<string, number[]>();
    for (const c of sends) {
      const k = c.chat;
      perChat.set(k, [...(perChat.get(k) ?? []), c.at]);
    }
    const worstChat = Math.max(...[...perChat.values()].map((t) => maxInWindow(t, 1_000)));
    const rateLimited = (await emuCalls()).filter((c) => !c.ok).length;
    console.log(`jobs: ${JOBS} due at one instant, ${CHATS} chats, concurrency ${config.jobs.concurrency}`);
    console.log(
      `  runs: ${runs.filter((r) => r.status === 'done').length} done; start delay p50 ${sec(pct(startDelays, 50))}, p95 ${sec(pct(startDelays, 95))}, max ${sec(Math.max(...startDelays))}`,
    );
    console.log(
      `  most runs at once: ${maxRunning}; last run finished ${sec(lastRunDone - due)} after the due instant`,
    );
    console.log(`  reports: ${sends.length} delivered, last ${sec(Math.max(...times) - due)} after the due instant`);
    console.log(
      `  pacing: at most ${worstChat} per chat in any second, ${maxInWindow(times, 1_000)} per second for the bot; ${rateLimited} refused calls (429 etc.); pacer waits ${channel.pacer.waits}`,
    );

    // Idle: 10 000 jobs stored, none due for a day. Count wake-ups and time the due look-up.
    await core.db.updateTable('jobs').set({ state: 'deleted', next_run_at: null }).execute();
    await core.db.transaction().execute(async (trx) => {
      for (let i = 0; i < IDLE_JOBS; i++) {
        await insertJob(trx, {
          id: `idle${String(i).padStart(4, '0')}`,
          name: `idle ${i}`,
          owner_id: 'telegram:1',
          report_conversation_id: convs[i % CHATS] as string,
          prompt: 'later',
          cron: '0 9 * * *',
          run_at: null,
          timezone: 'UTC',
          next_run_at: Date.now() + 86_400_000 + i,
        });
      }
    });
    service.wake();
    await new Promise((r) => setTimeout(r, 200));
    const sleepsBefore = service.sleeps.length;
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) await earliestDue(core.db, { channels: ['telegram'], conversations: [] });
    const lookup = (performance.now() - t0) / 100;
    await new Promise((r) => setTimeout(r, 5_000));
    console.log(
      `  idle with ${IDLE_JOBS} jobs stored: ${service.sleeps.length - sleepsBefore} scheduler wake-ups in 5 s (next sleep ${service.sleeps.at(-1)} ms = jobs.resync_seconds), due look-up ${lookup.toFixed(3)} ms`,
    );
  } finally {
    await core.close();
    tg.kill('SIGTERM');
    server.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  run().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
