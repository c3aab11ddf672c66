/**
 * Model-side benchmark: what a turn costs in model-request bytes and in CPU.
 * - prompt bytes of the first and of the tenth turn of a "hi" conversation (default config);
 * - per-turn cost of turn 10 vs turn 1 000 of one conversation: CPU time of the process (core
 *   and the in-process scripted model) and the bytes of the turn's model requests, medians over
 *   ten turns each; summaries (compaction) are part of the turns that made them.
 * Asserts nothing. Run alone: `node --import tsx bench/model.ts`.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultToolset } from '../src/compose.js';
import { configSchema } from '../src/config.js';
import type { Channel } from '../src/contract/channel.js';
import { Core } from '../src/core/core.js';
import { SUMMARY_PROMPT } from '../src/core/compaction.js';
import { startScriptedLlm } from '../test/emulators/llm.js';

class NullChannel implements Channel {
  readonly name = 'bench';
  readonly capabilities = new Set<never>();
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async print(): Promise<void> {}
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** Run the model benchmark and print its figures. */
export async function run(): Promise<void> {
  const llm = await startScriptedLlm();
  const reply = 'Here is a considered answer with a few sentences of detail, as a model would write. '.repeat(3);
  llm.setHandler((body) =>
    body.messages[0]?.content === SUMMARY_PROMPT
      ? { text: `Summary: ${'the user chatted about many numbered things. '.repeat(20)}` }
      : { text: reply },
  );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-bench-model-'));
  mkdirSync(path.join(dir, 'ws'));
  try {
    const config = configSchema.parse({
      llm: { base_url: llm.url, api_key: 'k', model: 'gpt-4o-mini', max_retries: 0 },
      store: { database_url: `sqlite:${path.join(dir, 'bench.db')}` },
      workspace: { root: path.join(dir, 'ws') },
      access: { allowed_users: ['bench:u1'], rate_limit_per_minute: 1_000_000 },
      log: { level: 'silent' },
    });
    const core = await Core.open({ config, ...defaultToolset(config) });
    core.addChannel(new NullChannel());
    await core.start();
    const turn = async (chat: string, text: string) => {
      const before = llm.requests.length;
      const cpu = process.cpuUsage();
      const r = await core.submit({ channel: 'bench', chatKey: chat, userId: 'u1', text });
      if (r.status !== 'queued') throw new Error(`unexpected ${r.status}`);
      await core.idle();
      const used = process.cpuUsage(cpu);
      const requests = llm.requests.slice(before).filter((q) => q.path.endsWith('/chat/completions'));
      return {
        cpuMs: (used.user + used.system) / 1000,
        bytes: requests.reduce((a, q) => a + Buffer.byteLength(JSON.stringify(q.body)), 0),
        requests,
      };
    };

    const first = await turn('hi', 'hi');
    let tenth = first;
    for (let i = 2; i <= 10; i++) tenth = await turn('hi', `message ${i}`);
    console.log(
      `model: prompt bytes of a "hi" conversation: turn 1 ${first.bytes} B, turn 10 ${tenth.bytes} B (default config, deferred tools)`,
    );

    const samples = new Map<number, { cpu: number[]; bytes: number[] }>([
      [10, { cpu: [], bytes: [] }],
      [1000, { cpu: [], bytes: [] }],
    ]);
    let summaries = 0;
    for (let i = 1; i <= 1009; i++) {
      const r = await turn(
        'long',
        `Message ${i}: a paragraph about topic ${i % 37}, with some detail to make it as long as a real chat message.`,
      );
      summaries += r.requests.filter((q) => q.body.messages[0]?.content === SUMMARY_PROMPT).length;
      const bucket = i >= 10 && i < 20 ? samples.get(10) : i >= 1000 ? samples.get(1000) : undefined;
      bucket?.cpu.push(r.cpuMs);
      bucket?.bytes.push(r.bytes);
    }
    const at = (n: number) => samples.get(n) as { cpu: number[]; bytes: number[] };
    console.log(
      `model: per turn (median of 10), turn 10: ${median(at(10).cpu).toFixed(2)} ms CPU, ${median(at(10).bytes)} B to the model; ` +
        `turn 1 000: ${median(at(1000).cpu).toFixed(2)} ms CPU, ${median(at(1000).bytes)} B (context_tokens ${config.llm.context_tokens}; ${summaries} summary requests over 1 009 turns)`,
    );
    await core.close();
  } finally {
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
